import type { RunJournalEntry } from '../journal/run-journal';
import { AgentStep, PendingApproval, StopReason } from '../agent-run';

/**
 * The ports of the AgentWorker (issue 13). The worker keeps every goal as a run record in an `AgentRunStore`
 * (the source of truth: status, lease, result) and hands run ids to a `GoalQueue` (in-process mailbox, or
 * pg-boss in cluster mode). A run starts only when `AgentRunStore.claim` wins the conditional write, so a run id
 * delivered twice (a duplicate send, a retry after a lost lease) never runs twice at once.
 */

/**
 * `queued`: stored, not started (or handed back to be retried). `running`: claimed by an instance whose lease
 * (`leaseUntil`) is renewed while it runs. `interrupted`: stopped by a shutdown past its grace period, or its lease
 * expired (its instance died); retried until `maxAttempts`. `succeeded`/`failed`: final.
 */
export type AgentRunStatus = 'queued' | 'running' | 'interrupted' | 'waiting' | 'succeeded' | 'failed';

/** The decision on a proposal a waiting run waits on, as the pipeline's store held it: the model is told `observation`. */
export interface AgentRunDecision {
  readonly proposalId: string;
  readonly status: 'executed' | 'rejected' | 'failed' | 'expired';
  readonly observation: string;
}

/** What a run waits for (AgentRunStore.suspend): its proposals, until when, and the run as it stands. */
export interface AgentRunWait {
  readonly proposalIds: readonly string[];
  /** Past it, a proposal still pending is decided `expired` for the run (the agent's maxWaitMs). */
  readonly waitMs: number;
  readonly answer: string | null;
  readonly steps: readonly AgentStep[];
  readonly pendingApprovals: readonly PendingApproval[];
  /**
   * Runs one tenant may have waiting at once: past it the run does not wait (`suspend` answers 'full'). Decided in the
   * store under a lock of the tenant, so concurrent suspends never exceed it, on any instance.
   */
  readonly maxPerTenant?: number;
}

/** Who a goal runs for. Tenant and user are required (no wildcard); permissions are the caller's, never more. */
export interface AgentGoalScope {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

/** Where a goal came from: a caller (`post`) or a scheduled job's tick. */
export interface AgentRunOrigin {
  readonly jobId?: string;
  /** The tick of the schedule this run is for (ISO 8601, UTC). */
  readonly jobTick?: string;
}

export interface NewAgentRun extends AgentGoalScope, AgentRunOrigin {
  readonly id: string;
  readonly agent: string;
  readonly goal: string;
  readonly maxAttempts: number;
}

export interface AgentRunRecord extends AgentGoalScope, AgentRunOrigin {
  readonly id: string;
  readonly agent: string;
  readonly goal: string;
  readonly status: AgentRunStatus;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly answer: string | null;
  readonly stoppedReason: StopReason | null;
  readonly steps: readonly AgentStep[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly error: string | null;
  readonly leaseOwner: string | null;
  readonly leaseUntil: Date | null;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  /** A `waiting` run's proposals (AgentRunStore.suspend), until when it waits, and the decisions recorded so far. */
  readonly waitingFor?: readonly string[];
  readonly waitUntil?: Date | null;
  readonly decisions?: readonly AgentRunDecision[];
}

/** How a claimed run ended, written only while the caller still holds its lease. */
export interface AgentRunOutcome {
  readonly status: 'succeeded' | 'failed';
  readonly answer: string | null;
  readonly stoppedReason: StopReason | null;
  readonly steps: readonly AgentStep[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly error: string | null;
}

/**
 * One claim of a run: who holds it and which claim it is (`attempt`: the run's `attempts` once claimed, bumped by
 * every claim). Every write made under a claim (renewal, outcome, release) is fenced on both in the store: the holder
 * of an older claim writes nothing, whichever instance it runs on.
 */
export interface AgentRunLease {
  readonly runId: string;
  readonly owner: string;
  readonly attempt: number;
}

/**
 * How a store tells an outage of the database from a dead instance, on the database's clock. Every renewal and every
 * recovery records that an instance reached the store; a gap of at least `outageMs` without any is an outage (the
 * database was away, or no instance ran). Leases that lapsed after such a gap began are not taken back until `graceMs`
 * after it ended: their owners may be alive and renew them, or store the outcome of a run that ended meanwhile.
 */
export interface AgentRunClock {
  readonly outageMs: number;
  readonly graceMs: number;
}

/** Runs a recovery hands back: interrupted ones (they go first, before newer goals) and queued ones, oldest first. */
export interface RecoverableRuns {
  readonly interrupted: readonly string[];
  readonly queued: readonly string[];
}

/**
 * A run an insert refused: `waiting` runs were already waiting in its `bound`, all it may hold: its tenant's share
 * (`tenant`), or the whole mailbox (`mailbox`).
 */
export interface RefusedRun {
  readonly runId: string;
  readonly tenantId: string;
  readonly bound: 'tenant' | 'mailbox';
  readonly waiting: number;
}

/** The bounds of an insert (see AgentRunStore.insert). */
export interface AgentRunLimits {
  /** Waiting runs one tenant may hold. */
  readonly perTenant?: number;
  /** Waiting runs the whole store may hold (the cluster's mailbox). */
  readonly total?: number;
}

/** The mailbox as the store sees it: runs waiting to start, and runs claimed in the last `windowMs` (the drain). */
export interface AgentRunMailbox {
  readonly queued: number;
  readonly claimed: number;
}

/**
 * The run records. Every method is one statement or one transaction; concurrency on one run is settled by
 * conditional writes in the database, never by a read followed by a write.
 */
/** The highest `maxAttempts` of a run (the option's maximum; a graceful interruption raises a run's up to it). */
export const MAX_RUN_ATTEMPTS = 100;

export interface AgentRunStore {
  /**
   * Store new runs as `queued` (one transaction for the batch). With `perTenant`, a tenant holds at most that many
   * waiting runs (`queued` or `interrupted`); with `total`, the store holds at most that many: the runs beyond a bound
   * are not stored and come back as refused. The count and the insert are atomic (concurrent inserts never exceed a
   * bound, on any instance).
   */
  insert(runs: readonly NewAgentRun[], limits?: AgentRunLimits): Promise<{ readonly refused: readonly RefusedRun[] }>;
  /** One run, for its tenant only: another tenant's id, or an empty tenant, is null. */
  get(tenantId: string, runId: string): Promise<AgentRunRecord | null>;
  /**
   * queued|interrupted → running with `leaseOwner = owner`, `leaseUntil = now + leaseMs`, attempts + 1, as one
   * conditional write; the record's `attempts` is the claim's fence (AgentRunLease.attempt). Null when the run is not
   * claimable (running elsewhere, final, unknown). A run out of attempts is marked failed in the same conditional way
   * and returned with status `failed` to the one caller that did so (it reports the result); it is not to be run.
   */
  claim(runId: string, owner: string, leaseMs: number): Promise<AgentRunRecord | null>;
  /**
   * Record that this instance reached the store (see AgentRunClock), and renew the leases still held (same owner, same
   * attempt, still running; a lapsed lease not taken back yet is renewed too); returns the run ids of the others.
   */
  heartbeat(leases: readonly AgentRunLease[], leaseMs: number, clock: AgentRunClock): Promise<string[]>;
  /** Write the outcome if the lease is still held (owner and attempt); false when it was lost (then nothing is written). */
  finish(lease: AgentRunLease, outcome: AgentRunOutcome): Promise<boolean>;
  /**
   * running (this lease) → interrupted, lease cleared: given back to be retried (a graceful shutdown). The start is
   * given back too (`maxAttempts` + 1, at most MAX_RUN_ATTEMPTS): an interruption by a deploy is not the run's failure,
   * so rolling restarts never exhaust a run's attempts. A crash (the lease expires) still uses one.
   */
  release(lease: AgentRunLease, reason: string): Promise<boolean>;
  /**
   * Record that this instance reached the store, mark running runs whose lease lapsed `interrupted` (their instance
   * died), except those an outage protects (AgentRunClock), and return the runs to hand to a queue again: interrupted
   * ones and queued ones, each oldest first, at most `limit` of each.
   */
  recoverable(limit: number, clock: AgentRunClock): Promise<RecoverableRuns>;
  /** Runs waiting to start (`queued` or `interrupted`: the mailbox bound in cluster mode), and runs claimed in the last `windowMs`. */
  mailbox(windowMs: number): Promise<AgentRunMailbox>;
  /**
   * The run journal (docs/worker.md, the run journal): add `entries` (consecutive places `seq`, in order) to the run,
   * all or none, only while `lease` holds the run (running, same owner, same attempt); false when it does not (nothing
   * is written). An entry is written once: the same entry again at its place (a write whose answer was lost) changes
   * nothing and answers true; another entry at a place already taken throws RunJournalConflictException. With
   * `leaseMs`, a write that finds the lease holding also renews it to now + leaseMs, as a heartbeat would (the run writes
   * only while it holds the run, so the write is proof that it does). Optional, with `readJournal`: a store without them
   * journals nothing, and a run retried after its process died starts again from its first model turn.
   */
  appendJournal?(lease: AgentRunLease, entries: readonly RunJournalEntry[], leaseMs?: number): Promise<boolean>;
  /**
   * A run's journal, in order, for its tenant only (another tenant's run, or an empty tenant, has none); at most
   * MAX_JOURNAL_ENTRIES. With `page`: the entries after `afterSeq` (their `seq` greater), at most `limit` (a caller
   * reading a long journal page by page).
   */
  readJournal?(tenantId: string, runId: string, page?: JournalPage): Promise<RunJournalEntry[]>;
  /**
   * running (this lease) → waiting: the lease released (a waiting run holds no slot), what it waits for kept, with
   * `waitUntil = now + waitMs`, and the run as it stands (answer, steps). False when the lease does not hold the run;
   * 'full' when its tenant has `wait.maxPerTenant` runs waiting already (nothing is written: the run still holds it).
   * Optional, with `settle` and `waiting` (and the journal): a store without them never lets a run wait.
   */
  suspend?(lease: AgentRunLease, wait: AgentRunWait): Promise<boolean | 'full'>;
  /**
   * Record decisions on proposals a waiting run of the tenant waits for (others, and proposals decided already, are
   * ignored); when every one has its decision, waiting → queued (its start given back, as by `release`), as one
   * conditional write: `resumed` is true for exactly one caller, whichever instance saw the last decision first. With
   * `any` (an agent with `resumeOn: 'each'`), once any one has its decision.
   */
  settle?(
    tenantId: string,
    runId: string,
    decisions: readonly AgentRunDecision[],
    options?: SettleOptions,
  ): Promise<{ readonly resumed: boolean }>;
  /**
   * Waiting runs, at most `limit`, for the sweep that reads their proposals: those whose wait ends first first; or,
   * with `afterId`, the next page in id order after that id (`''` for the first), so that a sweep going round them
   * page by page reads every waiting run however many there are.
   */
  waiting?(limit: number, afterId?: string): Promise<AgentRunRecord[]>;
}

/** How a settle resumes a run: `any`, once one of its proposals is decided (default: once all are). */
export interface SettleOptions {
  readonly any?: boolean;
}

/** A page of a run's journal: the entries whose `seq` is greater than `afterSeq` (default: from the first), at most `limit`. */
export interface JournalPage {
  readonly afterSeq?: number;
  readonly limit?: number;
}

/** How a run id is handed over: `first` for a run taken back (its instance died or stopped), ahead of newer goals. */
export interface PushOptions {
  readonly first?: boolean;
}

/**
 * Hands run ids to whoever runs them. In-process: a bounded array and `concurrency` slots. pg-boss (cluster mode):
 * a queue on the same PostgreSQL, any instance may run any goal. A queue may deliver a run id more than once (a
 * duplicate send, a re-push by a recovery sweep): the worker runs a run only when it wins `AgentRunStore.claim`.
 */
export interface GoalQueue {
  /**
   * True when other instances share this queue (cluster mode): the mailbox bound then counts the run store's queued
   * runs (`mailbox`), and the recovery sweep re-pushes runs whatever this instance holds.
   */
  readonly shared?: boolean;
  /** Run ids waiting for a slot on this instance (an in-process queue); undefined for a shared queue. */
  readonly size?: number;
  /** Begin delivering: `handle` is called with one run id at a time per slot, at most `concurrency` at once here. */
  start(handle: (runId: string) => Promise<void>, concurrency: number): Promise<void>;
  /** Hand over runs already stored as `queued` (or `interrupted`); `first`: before every goal waiting without it. */
  push(runIds: readonly string[], options?: PushOptions): Promise<void>;
  /** Stop taking new run ids; resolves when no `handle` of this queue is still running or after `graceMs`. */
  stop(graceMs: number): Promise<void>;
  /** Release connections; called once at the end of the worker's shutdown (after it gave its runs back). */
  close?(): Promise<void>;
  /**
   * Optional, for health checks: reach the queue's backend (rejects when it cannot); resolves with what it tells, e.g.
   * `{ queued }`. A queue with nothing to reach (in-process) has none.
   */
  probe?(): Promise<Record<string, unknown>>;
}

/** Resolves when every promise has settled, or after `ms`, whichever comes first (a queue's stop with a grace). */
export async function settledWithin(promises: Iterable<Promise<unknown>>, ms: number): Promise<void> {
  const pending = [...promises];
  if (!pending.length) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(pending),
    new Promise<void>((r) => {
      timer = setTimeout(r, ms);
      timer.unref?.();
    }),
  ]);
  clearTimeout(timer);
}
