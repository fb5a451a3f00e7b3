import type { OpenAI } from 'openai';
import type { CompletionUsage } from 'openai/resources/completions';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { loadOptionalPeer } from '@zmodu/core';
import { oneLine } from '../error-text';
import { ChatMessage, MAX_TOOL_CALLS_KEPT, ModelProvider, ModelRequest, ModelTurn, ToolCall } from './model-provider';
import { modelClientSettings, ModelClientOptions } from './model-client';
import { malformedAnswer, modelFailure } from './model-failure';
import { StreamDeadline } from './stream-deadline';
import { fromFunctionName, toFunctionName } from './tool-names';

/** Options of an OpenAI-compatible chat model (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio). */
export type OpenAIModelOptions = ModelClientOptions;

/** The OpenAI Chat Completions API with tools, on the official `openai` SDK. */
export class OpenAIModelProvider implements ModelProvider {
  readonly name: string;
  private readonly client: OpenAI;
  private readonly sdk: typeof OpenAI;
  private readonly settings: ReturnType<typeof modelClientSettings>;

  /** Loads the `openai` package (an optional peer of @zmodu/agent): without it, it throws naming the package to install. */
  constructor(private readonly options: OpenAIModelOptions) {
    this.sdk = loadOpenAI();
    this.settings = modelClientSettings(PROVIDER, options, { key: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL' });
    this.client = new this.sdk(this.settings.sdk);
    this.name = `openai:${options.model}`;
  }

  /** The key this provider sends (options.apiKey or OPENAI_API_KEY): the agent module masks it wherever it appears. */
  secrets(): readonly string[] {
    return [this.settings.sdk.apiKey];
  }

  /** One turn; a failed request throws an error naming this provider and what the model server did (see modelFailure). */
  async complete(request: ModelRequest): Promise<ModelTurn> {
    const startedAt = Date.now();
    try {
      return request.onTextDelta ? await this.stream(request, request.onTextDelta) : await this.answer(request);
    } catch (err) {
      throw modelFailure(err, this.sdk, { ...this.settings.failure, startedAt, signal: request.signal });
    }
  }

  private async answer(request: ModelRequest): Promise<ModelTurn> {
    const completion = (await this.client.chat.completions.create(this.params(request), { signal: request.signal })) as unknown;
    const message = completionMessage(completion);
    const toolCalls: ToolCall[] = [];
    let omitted = 0;
    for (const call of message.tool_calls ?? []) {
      if (call.type !== 'function') continue;
      // Past the calls kept, only counted: their arguments are not even parsed (the agent refuses them in one summary).
      if (toolCalls.length < MAX_TOOL_CALLS_KEPT) toolCalls.push(toolCall(call.id, call.function.name, call.function.arguments));
      else omitted++;
    }
    return turnOf(message.content ?? '', message.refusal ?? '', toolCalls, (completion as { usage?: CompletionUsage }).usage, omitted);
  }

  /** Chat Completions with `stream: true`: text deltas as they come, tool-call pieces gathered by index, usage in the last chunk. */
  private async stream(request: ModelRequest, onTextDelta: (delta: string) => void): Promise<ModelTurn> {
    const deadline = new StreamDeadline('OpenAIModelProvider', request.signal, this.timeoutMs);
    const stream = await this.client.chat.completions.create(
      { ...this.params(request), stream: true, stream_options: { include_usage: true } },
      { signal: deadline.signal },
    );
    deadline.touch();
    let text = '';
    let refusal = '';
    let finished = false;
    let usage: CompletionUsage | undefined;
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let omitted = 0;
    const unindexed = { omitting: false };
    try {
      for await (const chunk of stream) {
        deadline.touch();
        if (!isObject(chunk)) throw malformedAnswer(PROVIDER, PROTOCOL, 'a stream chunk is not an object');
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta;
        if (!stringOrNone(delta?.content) || !stringOrNone(delta?.refusal))
          throw malformedAnswer(PROVIDER, PROTOCOL, 'a stream delta whose content is not a string');
        if (delta?.content) {
          text += delta.content;
          onTextDelta(delta.content);
        }
        if (delta?.refusal) refusal += delta.refusal;
        for (const piece of delta?.tool_calls ?? []) {
          if (!stringOrNone(piece.id) || !stringOrNone(piece.function?.name) || !stringOrNone(piece.function?.arguments))
            throw malformedAnswer(PROVIDER, PROTOCOL, 'a streamed tool call whose id, name or arguments is not a string');
          const key = pieceKey(piece, calls, unindexed);
          if (key === OMITTED) {
            omitted += piece.id ? 1 : 0; // a piece with an id starts a call; the others continue one not kept
            continue;
          }
          const call = calls.get(key) ?? { id: '', name: '', arguments: '' };
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
          calls.set(key, call);
        }
        if (choice.finish_reason) finished = true;
      }
    } catch (err) {
      deadline.finish(finished, err);
    }
    deadline.finish(finished);
    const toolCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c], i) => {
        if (!c.name) throw new Error(`${PROVIDER}: the stream ended with a tool call that has no function name`);
        return toolCall(c.id || `call_${i + 1}`, c.name, c.arguments);
      });
    return turnOf(text, refusal, toolCalls, usage, omitted);
  }

  private get timeoutMs(): number {
    return this.client.timeout;
  }

  private params(request: ModelRequest): ChatCompletionCreateParamsNonStreaming {
    const tools: ChatCompletionTool[] = request.tools.map((t) => ({
      type: 'function',
      function: { name: toFunctionName(t.name), description: t.description, parameters: t.parameters as Record<string, unknown> },
    }));
    return {
      model: this.options.model,
      messages: [{ role: 'system', content: request.system }, ...request.messages.map(toOpenAIMessage)],
      ...(tools.length ? { tools, parallel_tool_calls: true } : {}),
      ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
      ...(this.options.maxTokens === undefined ? {} : { max_completion_tokens: this.options.maxTokens }),
    };
  }
}

const PROVIDER = 'OpenAIModelProvider';
const PROTOCOL = 'Chat Completions';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringOrNone = (v: unknown) => v === undefined || v === null || typeof v === 'string';

/** What `npm install` needs for this provider: the major line of `openai` that @zmodu/agent is built and tested with. */
const OPENAI_PEER = 'openai@^7';

/**
 * The `openai` SDK, loaded when a provider is built (at boot, where the application configures its model), so that
 * an application that uses another provider need not install it. Only its types are imported at the top of this file.
 */
function loadOpenAI(): typeof OpenAI {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = loadOptionalPeer('openai', 'the OpenAI provider', () => require('openai') as typeof import('openai'), {
    install: OPENAI_PEER,
  });
  return sdk.OpenAI;
}

interface CheckedMessage {
  readonly content?: string | null;
  readonly refusal?: string | null;
  readonly tool_calls?: ReadonlyArray<{ type: string; id: string; function: { name: string; arguments: string } }> | null;
}

/**
 * The first choice's message of a completion, checked field by field: an answer of another shape (an HTML page, an
 * error object, JSON with the wrong types) is a model error naming what is wrong, never a crash or a turn of garbage.
 */
function completionMessage(completion: unknown): CheckedMessage {
  const bad = (what: string) => malformedAnswer(PROVIDER, PROTOCOL, what);
  if (!isObject(completion) || !Array.isArray(completion.choices)) throw bad('no choices array');
  const message = (completion.choices[0] as { message?: unknown } | undefined)?.message;
  if (!isObject(message)) throw bad('choices[0].message is not an object');
  if (!stringOrNone(message.content)) throw bad('message.content is not a string');
  if (!stringOrNone(message.refusal)) throw bad('message.refusal is not a string');
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw bad('message.tool_calls is not an array');
    for (const call of calls as unknown[]) {
      if (!isObject(call) || call.type !== 'function') continue;
      const fn = call.function;
      if (typeof call.id !== 'string' || !isObject(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string')
        throw bad('a tool call without a string id, function name and arguments');
    }
  }
  return message as CheckedMessage;
}

/** Past it, a streamed tool-call index is not a call of any real turn: a protocol error. */
const MAX_STREAMED_TOOL_CALL_INDEX = 1_000_000;
/** The key of a piece of a call past the calls kept (MAX_TOOL_CALLS_KEPT): counted, not gathered. */
const OMITTED = -1;

/**
 * Which call a streamed tool-call piece continues: its `index` (0 to 1,000,000), or, from a server that sends none, a
 * new call when the piece has an id and the last call otherwise. Anything else is a protocol error, never a merged
 * call. A new call once MAX_TOOL_CALLS_KEPT are gathered is OMITTED (the agent refuses it in its turn-cap summary).
 */
function pieceKey(piece: { index?: unknown; id?: string }, calls: Map<number, unknown>, unindexed: { omitting: boolean }): number {
  const index = piece.index;
  const full = calls.size >= MAX_TOOL_CALLS_KEPT;
  if (index !== undefined && index !== null) {
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) > MAX_STREAMED_TOOL_CALL_INDEX)
      throw new Error(
        `OpenAIModelProvider: the stream sent a tool-call piece with index ${oneLine(String(JSON.stringify(index)), 40)} (0 to ${MAX_STREAMED_TOOL_CALL_INDEX})`,
      );
    return calls.has(index as number) || !full ? (index as number) : OMITTED;
  }
  const last = calls.size ? Math.max(...calls.keys()) : -1;
  if (piece.id) {
    unindexed.omitting = full;
    return full ? OMITTED : last + 1;
  }
  if (last < 0) throw new Error('OpenAIModelProvider: the stream sent a tool-call piece with neither an index nor an id');
  return unindexed.omitting ? OMITTED : last;
}

function toolCall(id: string, functionName: string, args: string): ToolCall {
  return { id, name: fromFunctionName(functionName), arguments: parseArguments(args) };
}

/** Cached input tokens are part of prompt_tokens (prompt_tokens_details.cached_tokens): counted once. */
function turnOf(
  text: string,
  refusal: string,
  toolCalls: ToolCall[],
  usage: CompletionUsage | undefined | null,
  omitted: number,
): ModelTurn {
  return {
    text,
    ...(refusal ? { refusal } : {}),
    toolCalls,
    ...(omitted > 0 ? { omittedToolCalls: omitted } : {}),
    usage: { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 },
  };
}

/** The parsed arguments, or the raw text when it is not JSON (the agent answers the model with a tool error it can correct). */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return text;
  }
}

function toOpenAIMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content || null,
        ...(m.toolCalls.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: {
                  name: toFunctionName(c.name),
                  arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
                },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  }
}
