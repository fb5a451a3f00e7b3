import type { Anthropic } from '@anthropic-ai/sdk';
import type {
  Message,
  MessageCreateParamsNonStreaming,
  MessageDeltaUsage,
  MessageParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { loadOptionalPeer } from '@zmodu/core';
import { ChatMessage, MAX_TOOL_CALLS_KEPT, ModelProvider, ModelRequest, ModelTurn, ToolCall } from './model-provider';
import { modelClientSettings, ModelClientOptions } from './model-client';
import { malformedAnswer, modelFailure } from './model-failure';
import { StreamDeadline } from './stream-deadline';
import { fromFunctionName, toFunctionName } from './tool-names';

/** Options of an Anthropic model (the Messages API). */
export type AnthropicModelOptions = ModelClientOptions;

/** The Anthropic Messages API with tools, on the official `@anthropic-ai/sdk`. */
export class AnthropicModelProvider implements ModelProvider {
  readonly name: string;
  private readonly client: Anthropic;
  private readonly sdk: typeof Anthropic;
  private readonly settings: ReturnType<typeof modelClientSettings>;

  /** Loads `@anthropic-ai/sdk` (an optional peer of @zmodu/agent): without it, it throws naming the package to install. */
  constructor(private readonly options: AnthropicModelOptions) {
    this.sdk = loadAnthropic();
    this.settings = modelClientSettings(PROVIDER, options, { key: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL' });
    this.client = new this.sdk(this.settings.sdk);
    this.name = `anthropic:${options.model}`;
  }

  /** The key this provider sends (options.apiKey or ANTHROPIC_API_KEY): the agent module masks it wherever it appears. */
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
    const message = checkedMessage((await this.client.messages.create(this.params(request), { signal: request.signal })) as unknown);
    let text = '';
    const toolCalls: ToolCall[] = [];
    let omitted = 0;
    for (const block of message.content) {
      if (block.type === 'text') text += block.text;
      else if (block.type === 'tool_use' && toolCalls.length >= MAX_TOOL_CALLS_KEPT) omitted++;
      else if (block.type === 'tool_use') toolCalls.push({ id: block.id, name: fromFunctionName(block.name), arguments: block.input });
    }
    return turnOf(text, toolCalls, message.usage, message.stop_reason, omitted);
  }

  /**
   * Messages with `stream: true`: text deltas as they come, each tool_use block's input gathered from its
   * input_json_delta pieces (parsed at the end; text that is not JSON is returned raw), usage from message_start
   * and message_delta (whose counts are cumulative).
   */
  private async stream(request: ModelRequest, onTextDelta: (delta: string) => void): Promise<ModelTurn> {
    const deadline = new StreamDeadline('AnthropicModelProvider', request.signal, this.client.timeout);
    const stream = await this.client.messages.create({ ...this.params(request), stream: true }, { signal: deadline.signal });
    deadline.touch();
    let text = '';
    let stopReason: string | null = null;
    let stopped = false;
    let usage: Usage | undefined;
    const blocks = new Map<number, { id: string; name: string; json: string; input: unknown }>();
    let omitted = 0;
    try {
      for await (const event of stream) {
        deadline.touch();
        if (!isObject(event)) throw malformedAnswer(PROVIDER, PROTOCOL, 'a stream event is not an object');
        if (event.type === 'content_block_delta' && !isObject(event.delta))
          throw malformedAnswer(PROVIDER, PROTOCOL, 'a content_block_delta without a delta');
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta' && typeof event.delta.text !== 'string')
          throw malformedAnswer(PROVIDER, PROTOCOL, 'a text_delta whose text is not a string');
        if (event.type === 'content_block_start' && isObject(event.content_block) && event.content_block.type === 'tool_use')
          if (typeof event.content_block.id !== 'string' || typeof event.content_block.name !== 'string')
            throw malformedAnswer(PROVIDER, PROTOCOL, 'a tool_use block without a string id and name');
        if (event.type === 'message_start') usage = { ...event.message.usage };
        else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
          const { id, name, input } = event.content_block;
          // Past the calls kept, only counted: its input pieces find no block and are dropped.
          if (blocks.size >= MAX_TOOL_CALLS_KEPT && !blocks.has(event.index)) omitted++;
          else blocks.set(event.index, { id, name, json: '', input });
        } else if (event.type === 'content_block_delta') {
          if (event.delta.type === 'text_delta') {
            text += event.delta.text;
            onTextDelta(event.delta.text);
          } else if (event.delta.type === 'input_json_delta') {
            const block = blocks.get(event.index);
            if (block) block.json += event.delta.partial_json;
          }
        } else if (event.type === 'message_delta') {
          stopReason = event.delta.stop_reason;
          usage = mergeUsage(usage, event.usage);
        } else if (event.type === 'message_stop') stopped = true;
      }
    } catch (err) {
      deadline.finish(stopped, err);
    }
    deadline.finish(stopped);
    const toolCalls = [...blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, b]) => ({ id: b.id, name: fromFunctionName(b.name), arguments: b.json ? parseInput(b.json) : b.input }));
    return turnOf(text, toolCalls, usage, stopReason, omitted);
  }

  private params(request: ModelRequest): MessageCreateParamsNonStreaming {
    const tools: Tool[] = request.tools.map((t) => ({
      name: toFunctionName(t.name),
      description: t.description,
      input_schema: t.parameters as Tool['input_schema'],
    }));
    return {
      model: this.options.model,
      max_tokens: this.options.maxTokens ?? 4096,
      system: request.system,
      messages: toAnthropicMessages(request.messages),
      ...(tools.length ? { tools } : {}),
      ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
    };
  }
}

const PROVIDER = 'AnthropicModelProvider';
const PROTOCOL = 'Messages';

/** What `npm install` needs for this provider: the major line of `@anthropic-ai/sdk` that @zmodu/agent is built and tested with. */
const ANTHROPIC_PEER = '@anthropic-ai/sdk@^1';

/**
 * The `@anthropic-ai/sdk` SDK, loaded when a provider is built (at boot, where the application configures its
 * model), so that an application that uses another provider need not install it. Only its types are imported above.
 */
function loadAnthropic(): typeof Anthropic {
  const sdk = loadOptionalPeer(
    '@anthropic-ai/sdk',
    'the Anthropic provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    () => require('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk'),
    { install: ANTHROPIC_PEER },
  );
  return sdk.Anthropic;
}
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A Messages answer, checked field by field: an answer of another shape (an HTML page, an error object, JSON with the
 * wrong types) is a model error naming what is wrong, never a crash or a turn of garbage.
 */
function checkedMessage(message: unknown): Message {
  const bad = (what: string) => malformedAnswer(PROVIDER, PROTOCOL, what);
  if (!isObject(message) || !Array.isArray(message.content)) throw bad('no content array');
  for (const block of message.content as unknown[]) {
    if (!isObject(block)) throw bad('a content block is not an object');
    if (block.type === 'text' && typeof block.text !== 'string') throw bad('a text block whose text is not a string');
    if (block.type === 'tool_use' && (typeof block.id !== 'string' || typeof block.name !== 'string'))
      throw bad('a tool_use block without a string id and name');
  }
  if (message.stop_reason !== undefined && message.stop_reason !== null && typeof message.stop_reason !== 'string')
    throw bad('stop_reason is not a string');
  return message as unknown as Message;
}

type Usage = Pick<MessageDeltaUsage, 'input_tokens' | 'output_tokens' | 'cache_read_input_tokens' | 'cache_creation_input_tokens'>;

/** message_delta's counts are cumulative: a count it gives replaces the one of message_start, never adds to it. */
function mergeUsage(start: Usage | undefined, delta: MessageDeltaUsage): Usage {
  return {
    input_tokens: delta.input_tokens ?? start?.input_tokens ?? 0,
    output_tokens: delta.output_tokens ?? start?.output_tokens ?? 0,
    cache_read_input_tokens: delta.cache_read_input_tokens ?? start?.cache_read_input_tokens ?? null,
    cache_creation_input_tokens: delta.cache_creation_input_tokens ?? start?.cache_creation_input_tokens ?? null,
  };
}

/** The tool input, or the raw text when it is not JSON (the agent answers the model with a tool error it can correct). */
function parseInput(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/** input_tokens leaves out the cached prompt: cache reads and writes are counted beside it, each once. */
function turnOf(text: string, toolCalls: ToolCall[], u: Partial<Usage> | undefined, stopReason: string | null, omitted: number): ModelTurn {
  const inputTokens = (u?.input_tokens ?? 0) + (u?.cache_read_input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0);
  const refused = stopReason === 'refusal';
  return {
    text: refused ? '' : text,
    toolCalls: refused ? [] : toolCalls,
    ...(omitted > 0 && !refused ? { omittedToolCalls: omitted } : {}),
    usage: { inputTokens, outputTokens: u?.output_tokens ?? 0 },
    ...(refused ? { refusal: text || 'The model refused to answer.' } : {}),
  };
}

/** Our conversation as Messages: tool results of one turn go back together, in one user message. */
function toAnthropicMessages(messages: readonly ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant')
      out.push({
        role: 'assistant',
        content: [
          ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
          ...m.toolCalls.map((c) => ({
            type: 'tool_use' as const,
            id: c.id,
            name: toFunctionName(c.name),
            input: (c.arguments !== null && typeof c.arguments === 'object' ? c.arguments : {}) as Record<string, unknown>,
          })),
        ],
      });
    else {
      const result: ToolResultBlockParam = { type: 'tool_result', tool_use_id: m.toolCallId, content: m.content };
      const last = out[out.length - 1];
      if (last?.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result'))
        (last.content as ToolResultBlockParam[]).push(result);
      else out.push({ role: 'user', content: [result] });
    }
  }
  return out;
}
