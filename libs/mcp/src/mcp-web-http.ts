import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A node request and response as the web-standard `Request` and `Response` the v2 SDK's HTTP entries take and give
 * (`createMcpHandler`, `WebStandardStreamableHTTPServerTransport`): the conversion `@modelcontextprotocol/node` makes,
 * without its dependencies (hono). The body has already been read and parsed (the app's body parser, or readBody).
 */

/** The request as a web `Request`, its body the parsed JSON again; `signal` aborts when the client goes away. */
export function toWebRequest(req: IncomingMessage, body: unknown, signal: AbortSignal): Request {
  const method = (req.method ?? 'GET').toUpperCase();
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  let text: string | undefined;
  if (method !== 'GET' && method !== 'HEAD' && body !== undefined) {
    text = JSON.stringify(body);
    headers.delete('content-encoding');
    headers.delete('transfer-encoding');
    headers.set('content-length', String(Buffer.byteLength(text)));
  }
  // The Host header is the client's: the URL is only the path (nothing of the SDK routes on it).
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://localhost');
  } catch {
    url = new URL('http://localhost/');
  }
  return new Request(url, { method, headers, signal, ...(text !== undefined ? { body: text } : {}) });
}

/**
 * Write a web `Response` to the node response: status and headers, then the body as it streams (an SSE stream stays
 * open as long as the SDK keeps it), honouring backpressure. When the client goes away (`signal`), the body is
 * cancelled, which tells the SDK the stream is gone (a 2026 request is cancelled that way).
 */
export async function writeWebResponse(res: ServerResponse, response: Response, signal: AbortSignal): Promise<void> {
  if (res.headersSent) return;
  // A flat list of name, value, name, value (writeHead takes one): no object keyed by a header name, so a header named
  // like an Object member (`__proto__` is a valid token) is a header like any other; each Set-Cookie stays its own.
  const headers: string[] = [];
  for (const [name, value] of response.headers) if (name !== 'set-cookie') headers.push(name, value);
  for (const cookie of response.headers.getSetCookie()) headers.push('set-cookie', cookie);
  res.writeHead(response.status, headers);
  const body = response.body;
  if (body === null) return void res.end();
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || signal.aborted) break;
      if (!res.write(value)) await drained(res, signal);
    }
  } catch {
    // The stream failed or was cancelled: end what was sent.
  } finally {
    signal.removeEventListener('abort', cancel);
    res.end();
  }
}

function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** An AbortSignal that aborts when the response closes before it was finished (the client went away). */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed) controller.abort();
  else res.once('close', () => void (res.writableFinished || controller.abort()));
  return controller.signal;
}
