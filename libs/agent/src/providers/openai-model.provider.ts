import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ChatMessage, ModelProvider, ModelRequest, ModelTurn, ToolCall } from './model-provider';
import { fromFunctionName, toFunctionName } from './tool-names';

/** Options of an OpenAI-compatible chat model (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio). */
export interface OpenAIModelOptions {
  /** The model name, e.g. 'gpt-4o-mini', or the name a local server serves. */
  readonly model: string;
  /** Default: process.env.OPENAI_API_KEY (a local server may take any non-empty key). */
  readonly apiKey?: string;
  /** Default: process.env.OPENAI_BASE_URL, else the OpenAI API. Ollama: http://127.0.0.1:11434/v1; vLLM: http://host:8000/v1. */
  readonly baseURL?: string;
  readonly temperature?: number;
  /** Most tokens the model may write in one turn. */
  readonly maxTokens?: number;
  /** One request's timeout (ms), each retry included. Default 60000. */
  readonly timeoutMs?: number;
  /** Retries of a request answered 408, 409, 429 or 5xx, or cut off, with backoff and jitter, honouring Retry-After (the SDK's own retry). Default 2. */
  readonly maxRetries?: number;
}

/** The OpenAI Chat Completions API with tools, on the official `openai` SDK. */
export class OpenAIModelProvider implements ModelProvider {
  readonly name: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIModelOptions) {
    if (typeof options?.model !== 'string' || !options.model.trim())
      throw new TypeError('OpenAIModelProvider needs options.model, the name of the model to call.');
    const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    if (!apiKey)
      throw new TypeError('OpenAIModelProvider needs an API key: options.apiKey or OPENAI_API_KEY (any non-empty key for a local server).');
    this.client = new OpenAI({
      apiKey,
      baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL ?? undefined,
      timeout: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 2,
    });
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
