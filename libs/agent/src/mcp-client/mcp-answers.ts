import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

/** The most answers to a server's own requests that wait to be sent at once; past it (or past the bytes) one is dropped. */
export const MAX_ANSWERS_IN_FLIGHT = 16;

/**
 * Bound what we owe an MCP server. The SDK client answers each request a server sends (a ping, a method we do not serve)
 * and sends every answer at once: a stdio child that never reads its stdin, or an HTTP server that holds each POST of an
 * answer, had them pile up without bound (pings with 1 MB ids: hundreds of MB in our memory within seconds, one POST
 * each over HTTP). At most MAX_ANSWERS_IN_FLIGHT answers and `maxBytes` of them wait to be sent; past that an answer is
 * dropped (its request goes unanswered) and `onDrop` is told. Our own requests and notifications are sent as before.
 */
export function boundAnswers(transport: Transport, maxBytes: number, onDrop: () => void): void {
  const send = transport.send.bind(transport);
  let waiting = 0;
  let bytes = 0;
  transport.send = async (message: JSONRPCMessage, options) => {
    if ('method' in message || !('id' in message)) return send(message, options);
    const size = Buffer.byteLength(JSON.stringify(message));
    if (waiting >= MAX_ANSWERS_IN_FLIGHT || bytes + size > maxBytes) return onDrop();
    waiting++;
    bytes += size;
    try {
      await send(message, options);
    } finally {
      waiting--;
      bytes -= size;
    }
  };
}
