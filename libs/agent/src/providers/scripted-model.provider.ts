import { ModelProvider, ModelRequest, ModelTurn, TokenUsage } from './model-provider';
import { estimateUsage } from './usage-estimate';
import { ZmoduError } from '@zmodu/core';

export interface ScriptedToolCall {
  readonly name: string;
  readonly arguments?: unknown;
  readonly id?: string;
}

export interface ScriptedReply {
  readonly text?: string;
  /** A refusal: the run ends `refused` with it as the answer. */
  readonly refusal?: string;
  readonly toolCalls?: readonly ScriptedToolCall[];
  readonly usage?: TokenUsage;
}

/** A fixed reply, or one computed from the conversation so far (e.g. to react to a denial). */
export type ScriptedTurn = ScriptedReply | ((request: ModelRequest) => ScriptedReply);

export class ScriptExhaustedError extends ZmoduError {
  constructor(turn: number, length: number) {
    super(
      `Scripted model has ${length} turns and was asked for turn ${turn + 1}; add turns or end the script with a reply that has no tool calls.`,
    );
    this.name = 'ScriptExhaustedError';
  }
}

/**
 * Replays a fixed list of turns, for tests and the offline demo. The turn played is the
 * number of assistant messages already in the conversation, so one provider serves many
 * runs at once, each from the start of the script. Asked to stream (`onTextDelta`), it sends its text a word at a time.
 */
export class ScriptedModelProvider implements ModelProvider {
  readonly name = 'scripted';
  private readonly turns: readonly ScriptedTurn[];

  constructor(turns: readonly ScriptedTurn[]) {
    if (!Array.isArray(turns) || turns.length === 0) throw new TypeError('ScriptedModelProvider needs a non-empty array of turns.');
    this.turns = [...turns];
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    let index = 0;
    for (const m of request.messages) if (m.role === 'assistant') index++;
    const turn = this.turns[index];
    if (turn === undefined) throw new ScriptExhaustedError(index, this.turns.length);
    const reply = typeof turn === 'function' ? turn(request) : turn;
    const text = reply.text ?? '';
    const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${index + 1}_${i + 1}`,
      name: c.name,
      arguments: c.arguments ?? {},
    }));
    const usage = reply.usage ?? estimateUsage({ system: request.system, messages: request.messages }, { text, toolCalls });
    if (request.onTextDelta) await streamWords(text, request.onTextDelta, request.signal);
    return { text, toolCalls, usage, ...(reply.refusal ? { refusal: reply.refusal } : {}) };
  }
}

/** Streams the text a word at a time (its spaces kept, so the pieces add up to it), yielding between pieces like a real stream. */
async function streamWords(text: string, onTextDelta: (delta: string) => void, signal: AbortSignal): Promise<void> {
  for (const piece of text.match(/\s*\S+\s*/g) ?? []) {
    if (signal.aborted) throw new Error('ScriptedModelProvider: the request was aborted (the run was aborted).');
    onTextDelta(piece);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The last tool observation in the conversation, parsed; handy in scripted turns. */
export function lastObservation(request: ModelRequest): unknown {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m.role === 'tool') {
      try {
        return JSON.parse(m.content);
      } catch {
        return m.content;
      }
    }
  }
  return undefined;
}
