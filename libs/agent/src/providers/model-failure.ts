import { safeText } from '../error-text';

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
}

/** Statuses the SDKs retry (with backoff, honouring Retry-After), up to maxRetries times. */
const retried = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * The error a failed model request ends in, saying which provider and what the model server did: did not answer
 * within timeoutMs, could not be reached, answered an error status (after how many attempts), answered something
 * that is not JSON, or cut the answer off. An abort of the run, and errors that already name the provider, pass as
 * they are. The run ends `model_error` with this text (README, "Point an agent at a real model").
 */
export function modelFailure(err: unknown, sdk: SdkErrors, facts: RequestFacts): unknown {
  const { provider, timeoutMs, maxRetries } = facts;
  if (facts.signal.aborted || err instanceof sdk.APIUserAbortError) return err;
  const text = safeText(err);
  if (text.startsWith(`${provider}:`)) return err;
  const attempts = maxRetries + 1;
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  let said: string;
  // A request that takes every attempt's full timeout timed out, whatever class the SDK gave it (under some test
  // runners the SDK cannot see its own abort as one and reports a connection error).
  const allTimedOut = Date.now() - facts.startedAt >= attempts * timeoutMs;
  if (err instanceof sdk.APIConnectionTimeoutError || (err instanceof sdk.APIConnectionError && allTimedOut))
    said = `the model server did not answer within ${timeoutMs} ms (timeoutMs), ${tries}`;
  else if (err instanceof sdk.APIConnectionError) said = `the model server could not be reached (${text}), ${tries}`;
  else if (err instanceof sdk.APIError && typeof err.status === 'number')
    said = `the model server answered HTTP ${err.status}${retried(err.status) ? ` (${tries})` : ''}: ${text}`;
  else if (isJsonSyntaxError(err, text)) said = `the model server's answer is not valid JSON (${text})`;
  else if (/\b(?:terminated|ECONNRESET|socket hang up|other side closed)\b/.test(text))
    said = `the connection to the model server was cut off before the answer was complete (${text})`;
  else said = text;
  return new Error(`${provider}: ${said}`, { cause: err });
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
