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
 * How a run ends for its caller: the body the JSON answer has, and its status code (200: the run ended; 202: it waits
 * for a human, or goes on in the background). `result` is the agent's, when it returned one (its quota refusal is told
 * as the 503 it is).
 */
export interface RunAnswer {
  readonly status: 200 | 202;
  readonly body: object;
  readonly result?: AgentRunResult;
  /** A run that goes on without the caller: the seq of its last journal entry (the `waiting` event's id). */
  readonly lastSeq?: number;
}

/** Runs a goal with the signal and the listener given: the stream's own, or a JSON answer's. */
export type RunGoal = (signal: AbortSignal, onEvent?: AgentRunContext['onEvent']) => Promise<RunAnswer>;

/**
 * Runs an agent and answers as Server-Sent Events on a Node response (express's, or fastify's `raw`): `step` per
 * tool call (its guard decision), `delta` per piece of the model's text, then `final` with the body the JSON answer
 * has (a run that waits for a human: `waiting`, with the body of the 202), or `error` with the body an HTTP error has
 * (`errorBody`).
 *
 * The stream opens with its first event: whatever fails before (the token quota unreadable at the first turn, the
 * database away) is still a plain HTTP error, thrown for the exception filter. A client that goes away, or stops
 * reading (past MAX_QUEUED_STREAM_BYTES queued), aborts the run.
 */
export async function streamRun(
  run: RunGoal,
  /** The run's id for an error's body, once known (a stored run's is known when it is stored). */
  runId: () => string | undefined,
  res: ServerResponse,
  errorBody: StreamErrorBody,
  retryAfterSeconds: number,
  callerSignal?: AbortSignal,
): Promise<void> {
  const stream = new RunEventStream(res);
  let answer: RunAnswer;
  // The client went away (clientAbortSignal), stopped reading (the stream's own), or the caller's signal aborted.
  const signal = AbortSignal.any([clientAbortSignal(res), stream.signal, ...(callerSignal ? [callerSignal] : [])]);
  try {
    answer = await run(signal, (e) => stream.event(e));
    if (!stream.started && answer.result) refuseUnreadableQuota(answer.result, retryAfterSeconds);
  } catch (err) {
    if (!stream.started) throw err; // a plain HTTP error: nothing was sent yet
    return stream.fail(errorBody(err, runId()));
  }
  // The same refusal, now that the stream is open: the quota could not be read at a later turn.
  if (answer.result?.stoppedReason === 'quota_unavailable') return stream.fail(quotaOutageBody(answer.result.runId, retryAfterSeconds));
  stream.final(answer.status === 202 ? 'waiting' : 'final', answer.body, answer.lastSeq);
}

/** A run of the agent itself, not stored (no AgentWorker): it answers 200 with its result. */
export function agentRun(agent: Agent, goal: string, context: AgentRunContext): RunGoal {
  return async (signal, onEvent) => {
    const result = await agent.run(goal, { ...context, signal, ...(onEvent ? { onEvent } : {}) });
    return { status: 200, body: result, result };
  };
}

/** An SSE answer on a Node response: events (with an id, for Last-Event-ID), keep-alives, a cap on what a slow client queues. */
export class RunEventStream {
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

  /** `final` with the run's body, or `waiting` when it waits for a human or goes on in the background (a 202's body). */
  final(event: 'final' | 'waiting', body: object, id?: number): void {
    this.send(event, body, id);
    this.end();
  }

  fail(body: object): void {
    this.send('error', body);
    this.end();
  }

  /** One event; `id` (a journal seq) is what a client that reconnects sends back as Last-Event-ID. */
  send(event: string, data: unknown, id?: number): void {
    if (!this.opened) this.open();
    if (this.res.writableEnded || this.res.destroyed) return;
    // JSON.stringify escapes line breaks, so one event is one `data:` line.
    this.res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
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

  /** Open the stream now (its headers sent), before any event. */
  begin(): void {
    if (!this.opened) this.open();
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (!this.res.writableEnded) this.res.end();
  }
}
