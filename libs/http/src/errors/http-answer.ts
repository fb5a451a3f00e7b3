import { HttpException } from '@nestjs/common';
import { isDatabaseUnavailable } from '@zmodu/core';
import { DATABASE_UNAVAILABLE_MESSAGE, INTERNAL_ERROR_MESSAGE, SERVER_FAULT_MESSAGE } from '../http.messages';
import { HttpErrorMapping, libraryErrorMapping } from './library-errors';

/** Seconds a client is told to wait (Retry-After) when the database cannot be reached. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** How the edge answers an exception: status, JSON body (not yet redacted), and the seconds of Retry-After. */
export interface HttpAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly retryAfterSeconds?: number;
  /**
   * What the filter logs: `unexpected` (an error nobody mapped, or a library exception that is the server's fault:
   * with its stack), `outage` (the database or another service is away: one line), nothing for a client's error.
   */
  readonly log?: 'unexpected' | 'outage';
}

/**
 * The answer to an exception, without side effects (the filter redacts, logs and sends it; a Server-Sent Events
 * stream sends its body as an `error` event). In order:
 *
 * - an HttpException keeps its status and body (a string body becomes `{ statusCode, message }`), except one that
 *   wraps a 4xx of the body parser (Nest 11 and 12 wrap them): answered as that 4xx, below;
 * - a database that cannot be reached (isDatabaseUnavailable of @zmodu/db: PostgreSQL connection errors, SQLSTATE
 *   57P01-57P03, 08xxx, 53300, the embedded driver's) is a 503 with Retry-After;
 * - a library exception (LIBRARY_HTTP_ERRORS) gets its status, `{ statusCode, code, message, ...fields }`;
 * - a 4xx of express's body parser (malformed JSON, a body over its limit) keeps its status, `field: 'body'`;
 * - anything else is a 500 `{ statusCode, message: 'Internal error', requestId }`: nothing of it is shown.
 */
export function httpAnswer(exception: unknown, requestId: string, retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS): HttpAnswer {
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    // Nest's express adapter wraps a 4xx of the body parser in an HttpException (its cause): answered as one unwrapped.
    const cause = (exception as { cause?: unknown }).cause;
    if (status < 500 && isBodyParserError(cause))
      return { status, body: { statusCode: status, message: (cause as Error).message, field: 'body' } };
    const body = exception.getResponse();
    // An HttpException may carry its Retry-After (QuotaOutageException does).
    const retry = (exception as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    return {
      status,
      body: typeof body === 'string' || body === null || typeof body !== 'object' ? { statusCode: status, message: body } : { ...body },
      ...(typeof retry === 'number' && Number.isInteger(retry) && retry > 0 ? { retryAfterSeconds: retry } : {}),
    };
  }
  if (isDatabaseUnavailable(exception))
    return {
      status: 503,
      body: { statusCode: 503, message: DATABASE_UNAVAILABLE_MESSAGE(retryAfterSeconds), requestId },
      retryAfterSeconds,
      log: 'outage',
    };
  const mapping = libraryErrorMapping(exception);
  if (mapping) return libraryAnswer(exception as Error, mapping, requestId, retryAfterSeconds);
  const parserStatus = clientErrorStatus(exception);
  if (parserStatus)
    return { status: parserStatus, body: { statusCode: parserStatus, message: (exception as Error).message, field: 'body' } };
  return { status: 500, body: { statusCode: 500, message: INTERNAL_ERROR_MESSAGE, requestId }, log: 'unexpected' };
}

function libraryAnswer(exception: Error, mapping: HttpErrorMapping, requestId: string, defaultRetry: number): HttpAnswer {
  const { status } = mapping;
  const own = exception as unknown as Readonly<Record<string, unknown>>;
  const retryAfterSeconds =
    status === 429 || status === 503 ? (mapping.retryAfter?.(own) ?? (status === 503 ? defaultRetry : undefined)) : undefined;
  const head = { statusCode: status, code: exception.name };
  if (status < 500) {
    const fields = Object.fromEntries(
      (mapping.fields ?? []).map((f) => [f, Object.hasOwn(own, f) && own[f] !== undefined ? own[f] : null]),
    );
    return {
      status,
      body: { ...head, message: exception.message, ...fields },
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    };
  }
  if (mapping.message)
    return {
      status,
      body: { ...head, message: mapping.message(retryAfterSeconds ?? defaultRetry), requestId },
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      log: 'outage',
    };
  return { status, body: { ...head, message: SERVER_FAULT_MESSAGE(requestId), requestId }, log: 'unexpected' };
}

/** An error of body-parser (http-errors with a `type`: entity.parse.failed, entity.too.large, charset.unsupported, ...). */
function isBodyParserError(err: unknown): boolean {
  return clientErrorStatus(err) !== undefined && typeof (err as { type?: unknown }).type === 'string';
}

/** A 4xx of express's body parser (http-errors: a numeric `status` and `expose: true`), e.g. malformed JSON or over its limit. */
function clientErrorStatus(err: unknown): number | undefined {
  const e = err as { status?: unknown; expose?: unknown } | null;
  if (!e || typeof e !== 'object' || typeof e.status !== 'number' || e.expose !== true) return undefined;
  return e.status >= 400 && e.status < 500 ? e.status : undefined;
}
