import { firstLine, oneLine, safeText } from '../error-text';

/** The error classes of an official SDK that tell what went wrong with a request (both SDKs have the same four). */
export interface SdkErrors {
  readonly APIError: abstract new (...args: never[]) => Error & { readonly status?: number };
  readonly APIConnectionError: abstract new (...args: never[]) => Error;
  readonly APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  readonly APIUserAbortError: abstract new (...args: never[]) => Error;
}

/** A request's settings and when it was sent, to tell a timeout from a refused connection and count the attempts. */
export interface RequestFacts {
  readonly provider: string;
  readonly startedAt: number;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** The run's signal: an abort of the run is told as such, not as a fault of the model server. */
  readonly signal: AbortSignal;
  /** Masks the provider's own key and the redactor's default secrets in what the model server said. */
  readonly redact: (text: string) => string;
}

/** The most characters of what a model server said (its error message) that a failure quotes, redacted first. */
export const MODEL_ERROR_EXCERPT_MAX_CHARS = 200;
/** The most characters of a failure's whole text (our words and the excerpt). */
const MODEL_ERROR_MAX_CHARS = 400;

/** What an error status says, as a failure tells it. */
const KINDS = new Map<number, string>([
  [400, 'bad request'],
  [401, 'authentication failed: check the API key'],
  [403, 'permission denied'],
  [404, 'not found: check the model name and the base URL'],
  [408, 'request timeout'],
  [409, 'conflict'],
  [413, 'request too large'],
  [422, 'unprocessable request'],
  [429, 'rate limited'],
]);

const statusKind = (status: number): string => KINDS.get(status) ?? (status >= 500 ? 'server error' : 'error status');

/** Statuses the SDKs retry (with backoff, honouring Retry-After), up to maxRetries times. */
const retried = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * The error a failed model request ends in, saying which provider and what the model server did: did not answer
 * within timeoutMs, could not be reached, answered an error status (its kind, after how many attempts), answered
 * something that is not JSON, or cut the answer off. What the server itself said is quoted only as a short excerpt:
 * the first line of its error message, redacted (the provider's key, in any of its forms, and every secret the
 * redactor knows), at most MODEL_ERROR_EXCERPT_MAX_CHARS characters: never its whole body, a traceback or a key it
 * echoed. The SDK's error is not kept as the cause (it holds the whole body). An abort of the run passes as it is.
 * The run ends `model_error` with this text (docs/models-and-streaming.md, "Point an agent at a real model").
 */
export function modelFailure(err: unknown, sdk: SdkErrors, facts: RequestFacts): unknown {
  const { provider, timeoutMs, maxRetries } = facts;
  if (facts.signal.aborted || err instanceof sdk.APIUserAbortError) return err;
  const text = safeText(err);
  const quoted = () => excerpt(text, facts.redact);
  // Ours (a stream that went quiet, an answer of the wrong shape): still redacted and bounded, for it may quote the server.
  if (text.startsWith(`${provider}:`)) return new Error(oneLine(facts.redact(text), MODEL_ERROR_MAX_CHARS));
  const attempts = maxRetries + 1;
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  let said: string;
  // A request that takes every attempt's full timeout timed out, whatever class the SDK gave it (under some test
  // runners the SDK cannot see its own abort as one and reports a connection error).
  const allTimedOut = Date.now() - facts.startedAt >= attempts * timeoutMs;
  if (err instanceof sdk.APIConnectionTimeoutError || (err instanceof sdk.APIConnectionError && allTimedOut))
    said = `the model server did not answer within ${timeoutMs} ms (timeoutMs), ${tries}`;
  else if (err instanceof sdk.APIConnectionError) said = `the model server could not be reached (${quoted()}), ${tries}`;
  else if (err instanceof sdk.APIError && typeof err.status === 'number') {
    const kind = statusKind(err.status);
    const server = serverMessage(text.replace(/^\d{3}\s+/, ''));
    const quote = server ? `: ${excerpt(server, facts.redact)}` : '';
    said = `the model server answered HTTP ${err.status} (${kind}${retried(err.status) ? `, ${tries}` : ''})${quote}`;
  } else if (err instanceof sdk.APIError)
    said = `the model server sent an error in its answer: ${excerpt(serverMessage(text), facts.redact)}`;
  else if (isJsonSyntaxError(err, text)) said = `the model server's answer is not valid JSON (${quoted()})`;
  else if (/\b(?:terminated|ECONNRESET|socket hang up|other side closed)\b/.test(text))
    said = `the connection to the model server was cut off before the answer was complete (${quoted()})`;
  else said = quoted();
  return new Error(`${provider}: ${said}`);
}

/**
 * The server's own message in an SDK error's text: the SDK writes the body's `message` (or `error.message`), or the
 * body as JSON when it has none; from JSON, its message, detail or title when there is one.
 */
function serverMessage(text: string): string {
  if (text === 'status code (no body)') return '';
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text;
  }
  for (const holder of [body, (body as { error?: unknown } | null)?.error])
    if (holder !== null && typeof holder === 'object')
      for (const field of ['message', 'detail', 'title', 'error'])
        if (Object.hasOwn(holder, field) && typeof (holder as Record<string, unknown>)[field] === 'string')
          return (holder as Record<string, string>)[field];
  return text;
}

/** What the server said, as a failure quotes it: its first line, redacted, on one line, at most 200 characters. */
function excerpt(text: string, redact: (text: string) => string): string {
  return oneLine(redact(firstLine(text)), MODEL_ERROR_EXCERPT_MAX_CHARS);
}

/** JSON.parse's SyntaxError (also one made in another realm, or re-wrapped by an SDK as `SyntaxError: ...` text). */
function isJsonSyntaxError(err: unknown, text: string): boolean {
  const name = err instanceof Error ? err.name : '';
  return name === 'SyntaxError' || err instanceof SyntaxError || /^SyntaxError\b.*\bJSON\b/.test(text);
}

/** The error for an answer of the model server that is not the protocol's: `what` says which part is wrong. */
export function malformedAnswer(provider: string, protocol: string, what: string): Error {
  return new Error(`${provider}: the model server's answer is not a ${protocol} answer (${what})`);
}
