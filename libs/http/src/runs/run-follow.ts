import type { ServerResponse } from 'node:http';
import { BadRequestException } from '@nestjs/common';
import type { AgentRunRecord, AgentWorker } from '@zmodu/agent';
import { clientAbortSignal } from '@zmodu/agent';
import { RunEventStream } from './run-event-stream';

/** A run's journal entry, as AgentWorker.journal gives it (kind, seq, step and what the kind carries). */
type Entry = Awaited<ReturnType<AgentWorker['journal']>>[number];

/** How often the journal is read again while the run goes on, and while it waits for a human. */
const FOLLOW_POLL_MS = 250;
const WAITING_POLL_MS = 1000;
/** A stream ends after this long (the run still going on); EventSource reconnects by itself with Last-Event-ID. */
export const MAX_FOLLOW_MS = 10 * 60_000;
/** Journal entries read per poll. */
const FOLLOW_PAGE = 200;
/** Streams one instance follows at once; past it, a 503 with Retry-After (each polls the database). */
export const MAX_FOLLOWERS = 500;
/** Of them, one tenant's at most: one tenant does not take every stream of an instance. */
export const MAX_FOLLOWERS_PER_TENANT = 50;
/** What EventSource waits before it reconnects (the `retry:` field). */
const RECONNECT_MS = 1000;

/** The seq a reconnecting client last saw: `Last-Event-ID` (what EventSource sends), or `?after=`; -1 from the first. */
export function lastEventId(header: string | string[] | undefined, query: Record<string, unknown>): number {
  const raw = typeof header === 'string' ? header : Object.hasOwn(query, 'after') ? query.after : undefined;
  if (raw === undefined || raw === '') return -1;
  if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw.trim()) || Number(raw) < -1)
    throw new BadRequestException({
      statusCode: 400,
      message: 'Last-Event-ID (or after) must be the id of an event of this stream: a whole number from -1',
      field: typeof header === 'string' ? 'Last-Event-ID' : 'after',
    });
  return Number(raw);
}

/**
 * Follow a stored run as Server-Sent Events from its journal (in the database: whichever instance runs it, before
 * and after a wait): each entry after `after` as an event whose id is its seq (`turn`: a model turn's text and the
 * calls it asked for; `step`: a tool call with its guard decision; `waiting`: a call that put a proposal in front of
 * a human; `decision`: the decision the run was told), then `final` with the run once it ended. A client that
 * reconnects with Last-Event-ID gets what came after. While the run waits the stream stays open (keep-alives), up
 * to MAX_FOLLOW_MS; a client that goes away stops the reading.
 */
export async function followRun(
  worker: AgentWorker,
  tenantId: string,
  runId: string,
  after: number,
  res: ServerResponse,
  show: (run: AgentRunRecord) => unknown,
  redact: (value: unknown) => unknown,
  closing?: AbortSignal,
): Promise<void> {
  const stream = new RunEventStream(res);
  // The client went away, or this instance shuts down (the stream ends: the client reconnects with Last-Event-ID).
  const gone = closing ? AbortSignal.any([clientAbortSignal(res), closing]) : clientAbortSignal(res);
  const until = Date.now() + MAX_FOLLOW_MS;
  let cursor = after;
  stream.begin();
  if (!res.destroyed) res.write(`retry: ${RECONNECT_MS}\n\n`);
  for (;;) {
    if (gone.aborted || res.destroyed) return stream.end();
    const entries = await worker.journal(tenantId, runId, { afterSeq: cursor, limit: FOLLOW_PAGE });
    for (const entry of entries) {
      const event = eventOf(entry);
      if (event) stream.send(event.name, redact(event.data), entry.seq);
      cursor = Math.max(cursor, entry.seq);
    }
    if (entries.length === FOLLOW_PAGE) continue; // more to read now
    const run = await worker.get(tenantId, runId);
    if (!run) return stream.fail({ statusCode: 404, message: 'The run is gone.' });
    if (run.status === 'succeeded' || run.status === 'failed') {
      // Entries written before the final status was: read once more, so that none is told after `final`.
      const rest = await worker.journal(tenantId, runId, { afterSeq: cursor, limit: FOLLOW_PAGE });
      if (rest.length > 0) continue;
      return stream.final('final', show(run) as object);
    }
    if (Date.now() >= until) return stream.end();
    await pause(run.status === 'waiting' ? WAITING_POLL_MS : FOLLOW_POLL_MS, gone);
  }
}

function eventOf(entry: Entry): { name: string; data: unknown } | null {
  switch (entry.kind) {
    case 'turn':
      return {
        name: 'turn',
        data: { step: entry.step, text: entry.turn.text, toolCalls: entry.turn.toolCalls.map((c) => ({ id: c.id, name: c.name })) },
      };
    case 'call':
      return { name: 'step', data: { step: entry.step, toolCall: entry.record } };
    case 'wait':
      return { name: 'waiting', data: { step: entry.step, proposalId: entry.proposalId, toolCall: entry.record } };
    case 'decision':
      return {
        name: 'decision',
        data: { step: entry.step, proposalId: entry.proposalId, status: entry.status, observation: entry.observation },
      };
    default:
      return null; // an intent: the call it announces is told by its `step`
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref?.();
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
