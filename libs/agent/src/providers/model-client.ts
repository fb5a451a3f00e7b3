/** What a real model provider takes (OpenAIModelProvider, AnthropicModelProvider). */
export interface ModelClientOptions {
  /** The model name, e.g. 'gpt-4o-mini' or 'claude-sonnet-4-5', or the name a local server serves. */
  readonly model: string;
  /** Default: the provider's variable (OPENAI_API_KEY, ANTHROPIC_API_KEY); a local server may take any non-empty key. */
  readonly apiKey?: string;
  /** Default: the provider's variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), else the provider's API. */
  readonly baseURL?: string;
  readonly temperature?: number;
  /** Most tokens the model may write in one turn (OpenAI: no limit by default; Anthropic requires one: 4096). */
  readonly maxTokens?: number;
  /** One request's timeout (ms), each retry included. Default 60000. */
  readonly timeoutMs?: number;
  /**
   * Retries of a request answered 408, 409, 429 or 5xx, or cut off, with backoff and jitter, honouring Retry-After
   * (the SDK's own retry). Default 2.
   */
  readonly maxRetries?: number;
}

/** The SDK client settings of a provider's options: the model and a key are required, saying where they come from. */
export function modelClientSettings(
  provider: string,
  options: ModelClientOptions,
  env: { readonly key: string; readonly baseURL: string },
): { apiKey: string; baseURL: string | undefined; timeout: number; maxRetries: number } {
  if (typeof options?.model !== 'string' || !options.model.trim())
    throw new TypeError(`${provider} needs options.model, the name of the model to call.`);
  const apiKey = options.apiKey ?? process.env[env.key];
  if (!apiKey) throw new TypeError(`${provider} needs an API key: options.apiKey or ${env.key}.`);
  return {
    apiKey,
    baseURL: options.baseURL ?? process.env[env.baseURL] ?? undefined,
    timeout: options.timeoutMs ?? 60_000,
    maxRetries: options.maxRetries ?? 2,
  };
}
