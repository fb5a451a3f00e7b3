/** What the filter needs of a response: express's, fastify's reply, or Node's ServerResponse. */
interface AnyResponse {
  headersSent?: boolean;
  writableEnded?: boolean;
  sent?: boolean;
  raw?: AnyResponse;
  statusCode?: number;
  status?: (code: number) => AnyResponse;
  json?: (body: unknown) => unknown;
  code?: (code: number) => AnyResponse;
  header?: (name: string, value: string) => AnyResponse;
  send?: (body: unknown) => unknown;
  setHeader?: (name: string, value: string) => unknown;
  end?: (chunk?: string) => unknown;
}

/**
 * Send a JSON answer on express, fastify or a bare Node response, with Retry-After when given. A response whose
 * headers are already out (a stream that had started) is ended as it is: nothing more can be said on it.
 */
export function reply(response: unknown, status: number, body: unknown, retryAfterSeconds?: number): void {
  const res = response as AnyResponse;
  const raw = res.raw ?? res;
  if (raw.headersSent || res.sent) {
    if (!raw.writableEnded && typeof raw.end === 'function') raw.end();
    return;
  }
  const retry = retryAfterSeconds !== undefined ? String(retryAfterSeconds) : undefined;
  if (typeof res.status === 'function' && typeof res.json === 'function') {
    if (retry) res.setHeader?.('Retry-After', retry);
    res.status(status).json?.(body);
    return;
  }
  if (typeof res.code === 'function' && typeof res.send === 'function') {
    if (retry) res.header?.('Retry-After', retry);
    res.code(status).send?.(body);
    return;
  }
  raw.statusCode = status;
  raw.setHeader?.('Content-Type', 'application/json; charset=utf-8');
  if (retry) raw.setHeader?.('Retry-After', retry);
  raw.end?.(JSON.stringify(body));
}
