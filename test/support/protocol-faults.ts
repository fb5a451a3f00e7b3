import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** One model turn a local protocol server plays: text (streamed a word at a time when asked to stream) and tool calls. */
export interface FakeTurn {
  readonly text?: string;
  /**
   * `arguments` are sent as JSON; `raw`, when given, is sent as the arguments text as it is (OpenAI's
   * `function.arguments`; Anthropic's streamed `input_json_delta`, or a non-streamed `input` that is this string).
   */
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: unknown; readonly raw?: string }>;
  /** Stream the first piece of text, then never finish (the client must cut it off). */
  readonly hang?: boolean;
}

/**
 * What a faulty model server does instead of a turn. `status`: an error status (with headers such as Retry-After, and
 * a body); `body`: 200 with this body, which is not the protocol's answer (text that is not JSON, JSON of another
 * shape); `silent`: never answers; `late`: answers the turn after `ms`; `truncated`: opens the stream (or the JSON
 * body), sends a first piece, then drops the connection.
 */
export type ProtocolFault =
  | { readonly fault: 'status'; readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string }
  | { readonly fault: 'body'; readonly body: string; readonly contentType?: string }
  | { readonly fault: 'silent' }
  | { readonly fault: 'late'; readonly ms: number; readonly turn: FakeTurn }
  | { readonly fault: 'truncated' };

export const isFault = (play: FakeTurn | ProtocolFault): play is ProtocolFault => 'fault' in play;

/**
 * Plays a fault on `res`. `turn` answers a turn as the protocol does (for `late`); `firstPiece` is the start of a
 * well-formed answer (the first stream event, or the first bytes of the JSON body) for `truncated`.
 */
export function playFault(res: ServerResponse, fault: ProtocolFault, turn: (t: FakeTurn) => void, firstPiece: () => void): void {
  switch (fault.fault) {
    case 'status':
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(fault.body ?? JSON.stringify({ error: { type: 'server_error', message: `fault ${fault.status}` } }));
      return;
    case 'body':
      res.writeHead(200, { 'content-type': fault.contentType ?? 'application/json' });
      res.end(fault.body);
      return;
    case 'silent':
      return; // the client's timeout (or the run's deadline) must end it
    case 'late': {
      const timer = setTimeout(() => turn(fault.turn), fault.ms);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    case 'truncated':
      firstPiece();
      setTimeout(() => res.destroy(), 20);
      return;
  }
}

/** A request a local protocol server received: its JSON body, headers, and when it arrived (Date.now()). */
export interface ReceivedRequest<B> {
  readonly body: B;
  readonly headers: IncomingMessage['headers'];
  readonly at: number;
}

/** How a protocol writes a turn as JSON or as a stream, and the start of an answer that a `truncated` fault cuts. */
export interface ProtocolWriter {
  answer(res: ServerResponse, turn: FakeTurn): void;
  stream(res: ServerResponse, turn: FakeTurn): void;
  truncated(res: ServerResponse, streamed: boolean): void;
}

export interface LocalProtocolServer<B> {
  /** http://127.0.0.1:<port> followed by `prefix`. */
  readonly url: string;
  readonly requests: Array<ReceivedRequest<B>>;
  /** Responses the client cut off before they ended. */
  cut(): number;
  close(): Promise<void>;
}

/**
 * A local HTTP server that answers each request with what `play` decides: a turn (JSON, or a stream when asked) or a
 * fault. `play` may return a promise to hold the answer (the client waits, as on a slow model, until it settles or goes away).
 */
export async function localProtocolServer<B extends { readonly stream?: boolean }>(
  prefix: string,
  writer: ProtocolWriter,
  play: (request: ReceivedRequest<B>) => FakeTurn | ProtocolFault | Promise<FakeTurn | ProtocolFault>,
): Promise<LocalProtocolServer<B>> {
  const requests: Array<ReceivedRequest<B>> = [];
  let cut = 0;
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', async () => {
      const request: ReceivedRequest<B> = { body: JSON.parse(data) as B, headers: req.headers, at: Date.now() };
      requests.push(request);
      res.on('close', () => {
        if (!res.writableEnded) cut++;
      });
      const played = await play(request);
      if (res.destroyed) return;
      const streamed = request.body.stream === true;
      const turn = (t: FakeTurn) => (streamed ? writer.stream(res, t) : writer.answer(res, t));
      if (!isFault(played)) return turn(played);
      playFault(res, played, turn, () => writer.truncated(res, streamed));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`,
    requests,
    cut: () => cut,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
