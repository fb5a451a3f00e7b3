import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import type { ModelClientOptions } from '../providers/model-client';
import type { ModelProvider, ModelRequest, ModelTurn } from '../providers/model-provider';
import { timersDuring } from './scheduled-timers';

/** How a local protocol server answers one request. */
export type Handler = (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) => void;

/** A local server started by a provider harness: what it was sent, and how many answers the client cut off. */
export interface ProtocolServer {
  /** The base URL to give the SDK. */
  readonly url: string;
  readonly requests: Array<{ body: Record<string, unknown>; headers: IncomingMessage['headers'] }>;
  /** Requests whose answer had not ended when the connection closed (counted from the request's arrival). */
  cut(): number;
  readonly server: Server;
}

/** What the shared cases need of a spec's provider (OpenAIModelProvider, AnthropicModelProvider). */
export interface ProviderUnderTest {
  /** The path the SDK's base URL ends with ('/v1' for OpenAI, '' for Anthropic). */
  readonly basePath: string;
  /** The provider against `baseURL`, with the spec's model and key and these options over. */
  make(baseURL: string, options?: Partial<ModelClientOptions>): ModelProvider;
  /** The spec's request, with these fields over. */
  request(over?: Partial<ModelRequest>): ModelRequest;
}

/** Poll `check` every 10 ms, for at most 5 s. */
export const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** A handler answering 200 with this text as it stands (not JSON, another shape). */
export const answerText =
  (text: string, type = 'application/json'): Handler =>
  (_b, _r, res) => {
    res.writeHead(200, { 'content-type': type });
    res.end(text);
  };

/** Starts a Server-Sent Events answer. */
export const openStream = (res: ServerResponse): ServerResponse =>
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });

/** A handler that begins a JSON answer with `start` and then drops the connection. */
export const cutOff =
  (start: string): Handler =>
  (_b, _r, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(start);
    setTimeout(() => res.destroy(), 20);
  };

/** Unsets the environment variable `name` while `run` runs. */
export function withoutEnv(name: string, run: () => void): void {
  // Own keys only: a name such as 'constructor' is a variable that is unset, not a member of Object.prototype.
  const had = Object.hasOwn(process.env, name);
  const value = had ? (Reflect.get(process.env, name) as string | undefined) : undefined;
  Reflect.deleteProperty(process.env, name);
  try {
    run();
  } finally {
    if (had && value !== undefined) Reflect.set(process.env, name, value);
  }
}

/**
 * The shared part of a provider spec against local protocol servers: call it inside the spec's describe block (it adds
 * an afterEach that closes the servers each test started).
 */
export function providerHarness(provider: ProviderUnderTest) {
  const started: Server[] = [];
  afterEach(() => {
    for (const server of started.splice(0)) {
      server.closeAllConnections();
      server.close();
    }
  });

  /** A server answering the nth request with the nth handler (the last handler answers the rest). */
  const serve = async (handlers: Handler[]): Promise<ProtocolServer> => {
    const requests: ProtocolServer['requests'] = [];
    let cut = 0;
    const server = createServer((req, res) => {
      // Counted from the request's arrival: a client that gives up before the body is read has cut it off too.
      res.on('close', () => {
        if (!res.writableEnded) cut++;
      });
      let data = '';
      req.on('data', (c: Buffer) => (data += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(data) as Record<string, unknown>;
        requests.push({ body, headers: req.headers });
        handlers[Math.min(requests.length - 1, handlers.length - 1)](body, req, res);
      });
    });
    started.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${provider.basePath}`;
    return { url, requests, cut: () => cut, server };
  };

  /** The message the provider fails with against one handler (undefined if it answered), and how many requests it sent. */
  const failure = async (handler: Handler, maxRetries = 0): Promise<[string | undefined, number]> => {
    const s = await serve([handler]);
    try {
      const err = await provider
        .make(s.url, { maxRetries })
        .complete(provider.request())
        .then(
          () => undefined,
          (e: Error) => e.message,
        );
      return [err, s.requests.length];
    } finally {
      s.server.closeAllConnections();
      s.server.close();
    }
  };

  /**
   * The turn got through `handlers` (a 429 with Retry-After: 1, another retryable status, then an answer) with two
   * retries; asserts that three requests were sent and that the Retry-After was honoured: after the 429, a wait of its
   * 1 s, over before the retry was sent.
   */
  const afterRetries = async (handlers: [Handler, Handler, Handler]): Promise<ModelTurn> => {
    const s = await serve(handlers);
    const { result: turn, timers } = await timersDuring(
      () => s.requests.length,
      () => provider.make(s.url, { maxRetries: 2 }).complete(provider.request()),
    );
    expect(s.requests).toHaveLength(3);
    expect(timers).toContainEqual({ ms: 1000, whenSet: 1, whenFired: 1 });
    return turn;
  };

  /** Sends one more request to `s` and aborts it once the server has it in hand; asserts it is refused as aborted. */
  const abortInFlight = async (s: ProtocolServer): Promise<void> => {
    const controller = new AbortController();
    const pending = provider.make(s.url, { maxRetries: 0 }).complete(provider.request({ signal: controller.signal }));
    const refused = expect(pending).rejects.toThrow(/abort/i);
    const sent = s.requests.length + 1;
    await until(() => s.requests.length === sent);
    controller.abort();
    await refused;
  };

  /**
   * Three streams that `started` begins (its first text delta: 'Thinking') and never ends: one aborted in mid-answer,
   * one cut off when it goes quiet (timeoutMs), and a third that `started` begins and the server then ends early,
   * refused. Asserts the refusals, and that the first two were cut off at the server: no request left running.
   */
  const streamFaults = async (startedStream: Handler): Promise<void> => {
    const s = await serve([startedStream, startedStream, (b, r, res) => (startedStream(b, r, res), res.end())]);
    const controller = new AbortController();
    const deltas: string[] = [];
    const aborted = provider.make(s.url, { maxRetries: 0 }).complete(
      provider.request({
        signal: controller.signal,
        onTextDelta: (d) => (deltas.push(d), setTimeout(() => controller.abort(), 50)),
      }),
    );
    await expect(aborted).rejects.toThrow(/aborted/);
    expect(deltas).toEqual(['Thinking']);

    // The stream goes quiet for good: only the idle deadline ends it (jest's test timeout is the hang guard).
    const quiet = provider.make(s.url, { maxRetries: 0, timeoutMs: 300 }).complete(provider.request({ onTextDelta: () => undefined }));
    await expect(quiet).rejects.toThrow(/sent nothing for 300 ms/);

    const cut = provider.make(s.url, { maxRetries: 0 }).complete(provider.request({ onTextDelta: () => undefined }));
    await expect(cut).rejects.toThrow(/ended before the turn was complete/);
    await until(() => s.cut() >= 2);
    expect(s.cut()).toBe(2); // the aborted and the quiet stream were cut off at the server
  };

  return { serve, failure, afterRetries, abortInFlight, streamFaults };
}
