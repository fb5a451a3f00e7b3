import type { ServerResponse } from 'node:http';
import { clientAbortSignal } from '@zmodu/agent';
import type { Agent, AgentRunContext, AgentRunEvent, AgentRunResult } from '@zmodu/agent';
import { quotaOutageBody, refuseUnreadableQuota } from './quota-outage';

/** Between keep-alive comments while a run is quiet (a long tool call), so that proxies keep the stream open. */
const KEEP_ALIVE_MS = 15_000;

/** Bytes an SSE answer may have queued for a client that does not read; past it the run is stopped and the stream cut. */
export const MAX_QUEUED_STREAM_BYTES = 4 * 1024 * 1024;

/**
 * Whether the caller asked for Server-Sent Events: `text/event-stream` named in Accept with a q above 0, and no
 * higher q for JSON (`application/json`, `application/*` or any type). On a tie (`application/json, text/event-stream`),
 * the stream: the caller named it.
 */
export function acceptsEventStream(request: { readonly headers: Readonly<Record<string, string | string[] | undefined>> }): boolean {
  const accept = request.headers.accept;
  if (typeof accept !== 'string') return false;
  let stream = 0;
  let json = 0;
  for (const entry of accept.split(',')) {
    const [type, ...params] = entry.split(';').map((p) => p.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q) || q < 0 || q > 1) continue;
    if (type === 'text/event-stream') stream = Math.max(stream, q);
    else if (type === 'application/json' || type === 'application/*' || type === '*/*') json = Math.max(json, q);
  }
  return stream > 0 && stream >= json;
}

/** How a stream that failed after it opened tells why: the body an HTTP error would have (ZmoduExceptionFilter.answer). */
export type StreamErrorBody = (err: unknown, runId: string | undefined) => object;

/**
 * Runs an agent and answers as Server-Sent Events on a Node response (express's, or fastify's `raw`): `step` per
 * tool call (its guard decision), `delta` per piece of the model's text, then `final` with the body the JSON answer
 * has, or `error` with the body an HTTP error has (`errorBody`).
 *
 * The stream opens with its first event: whatever fails before (the token quota unreadable at the first turn, the
 * database away) is still a plain HTTP error, thrown for the exception filter. A client that goes away, or stops
 * reading (past MAX_QUEUED_STREAM_BYTES queued), aborts the run.
 */
export async function streamRun(
  agent: Agent,
  goal: string,
  context: AgentRunContext,
  res: ServerResponse,
  errorBody: StreamErrorBody,
  retryAfterSeconds: number,
): Promise<void> {
  const stream = new RunEventStream(res);
  let result: AgentRunResult;
  // The client went away (clientAbortSignal), stopped reading (the stream's own), or the caller's signal aborted.
  const signal = AbortSignal.any([clientAbortSignal(res), stream.signal, ...(context.signal ? [context.signal] : [])]);
  try {
    result = await agent.run(goal, { ...context, signal, onEvent: (e) => stream.event(e) });
    if (!stream.started) refuseUnreadableQuota(result, retryAfterSeconds);
  } catch (err) {
    if (!stream.started) throw err; // a plain HTTP error: nothing was sent yet
    return stream.fail(errorBody(err, context.runId));
  }
  // The same refusal, now that the stream is open: the quota could not be read at a later turn.
  if (result.stoppedReason === 'quota_unavailable') return stream.fail(quotaOutageBody(result.runId, retryAfterSeconds));
  stream.final(result);
}

class RunEventStream {
  private readonly abort = new AbortController();
  private keepAlive: NodeJS.Timeout | undefined;
  private opened = false;

  constructor(private readonly res: ServerResponse) {
    res.on('close', () => clearInterval(this.keepAlive)); // the run itself is stopped by clientAbortSignal (streamRun)
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get started(): boolean {
    return this.opened;
  }

  /** The run's steps and deltas as they come; its result is sent by `final`, once the caller has seen it. */
  event(e: AgentRunEvent): void {
    if (e.type === 'delta') this.send('delta', { step: e.step, text: e.text });
    else if (e.type === 'step') this.send('step', { step: e.step, toolCall: e.toolCall });
  }

  final(result: AgentRunResult): void {
    this.send('final', result);
    this.end();
  }

  fail(body: object): void {
    this.send('error', body);
    this.end();
  }

  private send(event: string, data: unknown): void {
    if (!this.opened) this.open();
    if (this.res.writableEnded || this.res.destroyed) return;
    // JSON.stringify escapes line breaks, so one event is one `data:` line.
    this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    // A client that stops reading must not make the server hold the whole run in memory: stop the run, cut the stream.
    if (this.res.writableLength > MAX_QUEUED_STREAM_BYTES) {
      this.abort.abort();
      this.res.destroy();
    }
  }

  private open(): void {
    this.opened = true;
    if (this.res.destroyed) return;
    // The headers set before (security headers, x-request-id) stay; these make the answer an unbuffered, uncached stream.
    this.res.statusCode = 200;
    this.res.setHeader('Content-Type', 'text/event-stream');
    this.res.setHeader('Cache-Control', 'no-cache, no-store');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
    this.keepAlive = setInterval(() => {
      if (!this.res.writableEnded && !this.res.destroyed) this.res.write(': keep-alive\n\n');
    }, KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  private end(): void {
    clearInterval(this.keepAlive);
    if (!this.res.writableEnded) this.res.end();
  }
}
