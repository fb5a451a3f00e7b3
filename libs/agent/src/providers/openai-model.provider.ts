import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ChatMessage, ModelProvider, ModelRequest, ModelTurn, ToolCall } from './model-provider';
import { modelClientSettings, ModelClientOptions } from './model-client';
import { fromFunctionName, toFunctionName } from './tool-names';

/** Options of an OpenAI-compatible chat model (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio). */
export type OpenAIModelOptions = ModelClientOptions;

/** The OpenAI Chat Completions API with tools, on the official `openai` SDK. */
export class OpenAIModelProvider implements ModelProvider {
  readonly name: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIModelOptions) {
    this.client = new OpenAI(modelClientSettings('OpenAIModelProvider', options, { key: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL' }));
    this.name = `openai:${options.model}`;
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    const tools: ChatCompletionTool[] = request.tools.map((t) => ({
      type: 'function',
      function: { name: toFunctionName(t.name), description: t.description, parameters: t.parameters as Record<string, unknown> },
    }));
    const completion = await this.client.chat.completions.create(
      {
        model: this.options.model,
        messages: [{ role: 'system', content: request.system }, ...request.messages.map(toOpenAIMessage)],
        ...(tools.length ? { tools, parallel_tool_calls: true } : {}),
        ...(this.options.temperature === undefined ? {} : { temperature: this.options.temperature }),
        ...(this.options.maxTokens === undefined ? {} : { max_completion_tokens: this.options.maxTokens }),
      },
      { signal: request.signal },
    );
    const message = completion.choices[0]?.message;
    const toolCalls: ToolCall[] = [];
    for (const call of message?.tool_calls ?? []) {
      if (call.type !== 'function') continue;
      toolCalls.push({ id: call.id, name: fromFunctionName(call.function.name), arguments: parseArguments(call.function.arguments) });
    }
    // Cached input tokens are part of prompt_tokens (prompt_tokens_details.cached_tokens): counted once.
    const usage = completion.usage;
    return {
      text: message?.content ?? '',
      ...(message?.refusal ? { refusal: message.refusal } : {}),
      toolCalls,
      usage: { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 },
    };
  }
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
