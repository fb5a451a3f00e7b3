import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { ChatMessage, ModelProvider, ModelRequest, ModelTurn, ToolCall } from './model-provider';
import { modelClientSettings, ModelClientOptions } from './model-client';
import { fromFunctionName, toFunctionName } from './tool-names';

/** Options of an Anthropic model (the Messages API). */
export type AnthropicModelOptions = ModelClientOptions;

/** The Anthropic Messages API with tools, on the official `@anthropic-ai/sdk`. */
export class AnthropicModelProvider implements ModelProvider {
  readonly name: string;
  private readonly client: Anthropic;

  constructor(private readonly options: AnthropicModelOptions) {
    this.client = new Anthropic(
      modelClientSettings('AnthropicModelProvider', options, { key: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL' }),
    );
    this.name = `anthropic:${options.model}`;
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    const tools: Tool[] = request.tools.map((t) => ({
      name: toFunctionName(t.name),
      description: t.description,
      input_schema: t.parameters as Tool['input_schema'],
    }));
    const message = await this.client.messages.create(
      {
        model: this.options.model,
        max_tokens: this.options.maxTokens ?? 4096,
        system: request.system,
        messages: toAnthropicMessages(request.messages),
        ...(tools.length ? { tools } : {}),
        ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
      },
      { signal: request.signal },
    );
    let text = '';
    const toolCalls: ToolCall[] = [];
    for (const block of message.content) {
      if (block.type === 'text') text += block.text;
      else if (block.type === 'tool_use') toolCalls.push({ id: block.id, name: fromFunctionName(block.name), arguments: block.input });
    }
    // input_tokens leaves out the cached prompt: cache reads and writes are counted beside it, each once.
    const u = message.usage;
    const inputTokens = (u?.input_tokens ?? 0) + (u?.cache_read_input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0);
    const refused = (message.stop_reason as string | null) === 'refusal';
    return {
      text: refused ? '' : text,
      toolCalls: refused ? [] : toolCalls,
      usage: { inputTokens, outputTokens: u?.output_tokens ?? 0 },
      ...(refused ? { refusal: text || 'The model refused to answer.' } : {}),
    };
  }
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
