import type { FetchLike, RequestId } from '@modelcontextprotocol/client';
import { cappedEventStream, oversizeResponse } from './mcp-oversize';

/** Most of an HTTP error body read (the SDK quotes it in its error, which we clip further). */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * The fetch of our Streamable HTTP client: every body it answers with is read under `maxMessageBytes`, whatever the
 * server declares. A JSON body past it is dropped and answered, in its place, with `oversizeResponse` for each request
 * the POST carried; an SSE body has each event capped (cappedEventStream), past it those requests answered so too; an
 * error body is cut at 64 KiB. The SDK's
 * transport reads them as it would the server's (it has no limit of its own: `response.json()` held any size).
 */
export function cappedFetch(maxMessageBytes: number, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body || response.status < 200 || (response.status >= 300 && response.status < 400) || response.status === 204)
      return response;
    const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const rebuilt = (body: ConstructorParameters<typeof Response>[0]) =>
      new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    if (!response.ok) return rebuilt(await readAtMost(response.body, MAX_ERROR_BODY, true));
    if (type === 'text/event-stream') return rebuilt(cappedEventStream(response.body, maxMessageBytes, requestIds(init?.body)));
    const body = await readAtMost(response.body, maxMessageBytes, false);
    if (body) return rebuilt(body);
    const ids = requestIds(init?.body);
    const answer = ids.map((id) => oversizeResponse(id, maxMessageBytes));
    return new Response(JSON.stringify(answer.length === 1 ? answer[0] : answer), {
      status: response.status,
      headers: withJsonType(response.headers),
    });
  };
}

/** The body when it fits in `max` bytes; past it null (or, with `cut`, its first `max` bytes), the rest cancelled. */
async function readAtMost(body: ReadableStream<Uint8Array>, max: number, cut: boolean): Promise<Buffer | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    if (size + value.byteLength > max) {
      await reader.cancel().catch(() => undefined);
      if (!cut) return null;
      chunks.push(value.subarray(0, max - size));
      return Buffer.concat(chunks, max);
    }
    chunks.push(value);
    size += value.byteLength;
  }
}

/** The ids of the requests in a POST body we sent (one JSON-RPC message, or a batch). */
function requestIds(body: unknown): RequestId[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m) =>
      m !== null && typeof m === 'object' && 'method' in m && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number')
        ? [m.id]
        : [],
    );
  } catch {
    return [];
  }
}

function withJsonType(headers: Headers): Headers {
  const out = new Headers(headers);
  out.set('content-type', 'application/json');
  out.delete('content-length');
  return out;
}
