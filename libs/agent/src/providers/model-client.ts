import { Logger } from '@nestjs/common';
import { Redactor } from '@zmodu/guard';
import { oneLine, safeText } from '../error-text';
import type { RequestFacts } from './model-failure';

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

/** The logger an official SDK writes to (both SDKs take this shape). */
export interface SdkLogger {
  error(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  debug(message: string, ...rest: unknown[]): void;
}

/** What a provider builds its SDK client from, and the redaction of what the model server says. */
export interface ModelClientSettings {
  readonly apiKey: string;
  readonly baseURL: string | undefined;
  readonly timeout: number;
  readonly maxRetries: number;
  /** The SDK's own log lines (a stream event that is not JSON, a retry), redacted, through Nest's Logger. */
  readonly logger: SdkLogger;
}

/** The longest line of the SDK's own logs that is written. */
const SDK_LOG_LINE_MAX_CHARS = 1000;

/** What a provider's failure is told with (modelFailure), but for the request's own facts. */
export type FailureSettings = Omit<RequestFacts, 'startedAt' | 'signal'>;

/**
 * The SDK client settings of a provider's options (the model and a key are required, saying where they come from),
 * and what its failures are told with: `redact` masks what the provider must never show (its key, in every form, and
 * the redactor's default secrets).
 */
export function modelClientSettings(
  provider: string,
  options: ModelClientOptions,
  env: { readonly key: string; readonly baseURL: string },
): { readonly sdk: ModelClientSettings; readonly failure: FailureSettings } {
  if (typeof options?.model !== 'string' || !options.model.trim())
    throw new TypeError(`${provider} needs options.model, the name of the model to call.`);
  const apiKey = options.apiKey ?? process.env[env.key];
  if (!apiKey) throw new TypeError(`${provider} needs an API key: options.apiKey or ${env.key}.`);
  const redactor = new Redactor();
  redactor.addSecrets([apiKey]);
  const redact = (text: string) => redactor.redactText(text);
  const timeout = options.timeoutMs ?? 60_000;
  const maxRetries = options.maxRetries ?? 2;
  return {
    sdk: {
      apiKey,
      baseURL: options.baseURL ?? process.env[env.baseURL] ?? undefined,
      timeout,
      maxRetries,
      logger: sdkLogger(provider, redact),
    },
    failure: { provider, timeoutMs: timeout, maxRetries, redact },
  };
}

/**
 * The SDK's logger: each line redacted and on one line. (@anthropic-ai/sdk logs, at its default level `warn`, the raw
 * data of a stream event that is not JSON: a hostile server's chosen text; openai 7 logs the line without it.)
 */
function sdkLogger(provider: string, redact: (text: string) => string): SdkLogger {
  const logger = new Logger(provider);
  const line = (message: string, rest: unknown[]) => oneLine(redact([message, ...rest].map(printable).join(' ')), SDK_LOG_LINE_MAX_CHARS);
  return {
    error: (message, ...rest) => logger.error(line(message, rest)),
    warn: (message, ...rest) => logger.warn(line(message, rest)),
    info: (message, ...rest) => logger.log(line(message, rest)),
    debug: (message, ...rest) => logger.debug(line(message, rest)),
  };
}

function printable(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return safeText(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return safeText(value);
  }
}
