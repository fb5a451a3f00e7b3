import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { SkillRegistry } from '@zmodu/skills';
import { AgentRunContext, AgentRunResult, AgentStep, StopReason } from '../agent-run';
import {
  LEASE_LOST_MESSAGE,
  RUN_CRASHED_MESSAGE,
  SHUTDOWN_INTERRUPTED_MESSAGE,
  NOT_THIS_RUNS_PROPOSAL_MESSAGE,
  WAITING_FULL_MESSAGE,
  WORKER_NEEDS_AGENTS_MESSAGE,
} from '../agent.messages';
import { InvalidWorkerOptionsException } from '../exceptions/invalid-worker-options.exception';
import { AgentRegistry } from '../agent.registry';
import { InvalidGoalException } from '../exceptions/invalid-goal.exception';
import { MailboxFullException } from '../exceptions/mailbox-full.exception';
import { AGENT_GOAL_QUEUE, AGENT_RUN_STORE } from './agent-worker.constants';
import { AGENT_WORKER_MODULE_OPTIONS } from './agent-worker.module-definition';
import { AgentResultListener, AgentWorkerOptions, ResolvedAgentWorkerOptions } from './agent-worker.options';
import { resolveWorkerOptions } from './resolve-worker-options';
import {
  AgentRunClock,
  AgentRunDecision,
  AgentRunLease,
  AgentRunWait,
  AgentRunLimits,
  AgentRunOrigin,
  AgentRunOutcome,
  AgentRunRecord,
  AgentRunStore,
  GoalQueue,
  JournalPage,
  NewAgentRun,
  RefusedRun,
  settledWithin,
} from './worker.ports';
import { safeText } from '../error-text';
import { auditDigest } from '@zmodu/guard/internal';
import { scopeIdProblem } from '@zmodu/core';
import { isDatabaseUnavailable } from '@zmodu/core';
import { UnhandledRejectionCounts, unhandledRejectionCounts } from './unhandled-rejection-net';
import { journalPage } from '../journal/run-journal';
import type { RunJournal, RunJournalEntry } from '../journal/run-journal';
import { RuntimeEvents } from '@zmodu/guard';
import { PROPOSAL_OUTCOMES, ProposalOutcome, ProposalOutcomes } from '@zmodu/guard/internal';
import { DEFAULT_MAX_WAIT_MS, DEFAULT_RUN_TIMEOUT_MS } from '../agent-definition';

/** Who posts a goal, and to which agent (optional when the application defines exactly one). */
export interface PostGoalOptions extends AgentRunOrigin {
  readonly agent?: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

/** What the worker did since it started on this instance. */
export interface AgentWorkerStats {
  /** Goals posted here and not started yet (being stored, or waiting for a slot). */
  readonly queued: number;
  readonly running: number;
  readonly succeeded: number;
  readonly failed: number;
  /** Runs stopped by a shutdown past its grace period, or whose lease this instance lost: retried later. */
  readonly interrupted: number;
  /** Posts refused with MailboxFullException. */
  readonly rejected: number;
  /** Failures of onResult listeners or of the worker's own bookkeeping (store writes); never a model or tool error. */
  readonly handlerErrors: number;
  /** Runs that stopped here to wait for a human decision (their lease released), and runs this instance resumed. */
  readonly waiting: number;
  readonly resumed: number;
  /**
   * Unhandled rejections seen by the process net of cluster mode (see holdUnhandledRejectionNet), in this process:
   * `contained` ones said the database could not be reached, `raised` ones did not (bugs, logged with their stack).
   */
  readonly unhandledRejections: UnhandledRejectionCounts;
}

/** Stop reasons that make a run `failed` even when the result carries no error text. */
const FAILED_REASONS: ReadonlySet<StopReason> = new Set([
  'model_error',
  'aborted',
  'timed_out',
  'quota_unavailable',
  'malformed_tool_calls',
]);
/** After the grace period, how long aborted runs get to return before their leases are released regardless. */
const ABORT_WAIT_MS = 2000;
/** A run's outcome the store refused for another reason than a lost database: tries before it is given up. */
const OUTCOME_TRIES = 3;
/** Waits between tries of storing an outcome: doubling from the first to the last. */
const OUTCOME_RETRY_FIRST_MS = 100;
const OUTCOME_RETRY_MAX_MS = 5000;
/** After the store failed, recover again after this wait, doubling up to leaseMs until a recovery succeeds. */
const RECOVER_SOON_FIRST_MS = 500;
/** Cluster mode: how often the count of queued runs (the shared mailbox) is read again. */
const SHARED_COUNT_MS = 1000;
/** Runs of each kind (interrupted, queued) a recovery sweep hands back at most. */
const RECOVER_LIMIT = 500;
/** How often `run` reads a run that a slot took before it could claim it. */
const ENDED_POLL_MS = 100;
/** The drain of the mailbox (runs claimed) is measured over this window: Retry-After is computed from it. */
const DRAIN_WINDOW_MS = 30_000;
/** Retry-After bounds, in seconds: a mailbox that drained nothing in the window gets the upper one. */
const RETRY_AFTER_MIN_S = 1;
const RETRY_AFTER_MAX_S = 60;

interface RunningGoal {
  readonly controller: AbortController;
  /** The claim it runs under: every write for it is fenced on the owner and the attempt. */
  readonly lease: AgentRunLease;
  stop?: 'shutdown' | 'lease_lost';
  /** When the last claim or renewal that succeeded was sent: the lease holds until leaseMs after it, at most. */
  renewedAt: number;
  /** The run returned: its outcome is being stored (tried again while the database is away). */
  ended?: boolean;
  /**
   * The run is writing its journal (tried again while the database is away): not stopped by the clock meanwhile, since
   * the write is fenced on its claim in the store and renews its lease when it lands (or answers that the run is lost).
   */
  writing?: boolean;
}

interface PendingPost {
  readonly run: NewAgentRun;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** Longest tenant, user, permission code or run id, and most permission codes, a post or a lookup takes. */
const MAX_SCOPE_PART = 200;
const MAX_PERMISSIONS = 500;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// A goal may hold newlines and tabs, never NUL (PostgreSQL text cannot) or other control characters.
// eslint-disable-next-line no-control-regex
const GOAL_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * Runs goals in the background on this instance. `post` stores a goal as a queued run (durable before it resolves)
 * and hands it to `concurrency` slots; each run is claimed in the run store under a lease renewed by a heartbeat,
 * so a goal runs once even when delivered twice. Model, tool and run failures end as failed results, never as
 * crashes. At shutdown, queued goals stay queued and running ones get `shutdownGraceMs`, then are stored as
 * interrupted; both run at the next start.
 */
@Injectable()
export class AgentWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** This instance's lease owner name. */
  readonly instanceId = `worker-${randomUUID()}`;
  private readonly logger = new Logger('AgentWorker');
  private readonly options: ResolvedAgentWorkerOptions;
  private readonly listeners = new Set<AgentResultListener>();
  private readonly running = new Map<string, RunningGoal>();
  /** Runs this instance gave back at shutdown (whether they returned on their abort or not). */
  private readonly givenBack: string[] = [];
  private pending: PendingPost[] = [];
  private storing = 0;
  /** Slots started (runs stored before are handed over by the start's recovery). */
  private started = false;
  /** Runs stored before the slots started (they are recovered at the start). */
  private storedBeforeStart = 0;
  /** Cluster mode: queued runs in the store at the last count, and posts stored here since. */
  private sharedQueued = 0;
  private sharedPostedSince = 0;
  private countTimer?: NodeJS.Timeout;
  private flushScheduled = false;
  private startup?: Promise<void>;
  private stopped = false;
  private heartbeatTimer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  /** A recovery sooner than the next sweep, after the store failed (a lost database): its timer and next wait. */
  private soonTimer?: NodeJS.Timeout;
  private soonDelayMs = RECOVER_SOON_FIRST_MS;
  /** Cluster mode: runs claimed in the whole cluster in the last DRAIN_WINDOW_MS, at the last count. */
  private sharedClaimed = 0;
  /** In-process: when this instance claimed runs, within the last DRAIN_WINDOW_MS (oldest first). */
  private readonly claims: number[] = [];
  private startedAt = Date.now();
  /** The store could not be reached by the last idle heartbeat (logged once until it answers). */
  private pulseFailing = false;
  private readonly counts = { succeeded: 0, failed: 0, interrupted: 0, rejected: 0, handlerErrors: 0, waiting: 0, resumed: 0 };
  private readonly unsubscribe?: () => void;
  private sweepingWaits = false;
  /** Runs a caller waits for (`run`), on this instance: a shutdown waits for them as for its slots. */
  private readonly callerRuns = new Set<Promise<unknown>>();
  /** Where the sweep of waiting runs goes on from (the last id of its last full page; '' to start over). */
  private waitCursor = '';

  constructor(
    @Inject(AGENT_WORKER_MODULE_OPTIONS) raw: AgentWorkerOptions,
    // Optional only to say what is missing: the worker runs AgentModule's agents.
    @Optional() private readonly registry: AgentRegistry,
    @Inject(AGENT_RUN_STORE) private readonly store: AgentRunStore,
    @Inject(AGENT_GOAL_QUEUE) private readonly goalQueue: GoalQueue,
    /** The skills' declarations: a skill whose audit keeps a digest has its calls stored as digests in the run too. */
    @Optional() private readonly skills?: SkillRegistry,
    /** The proposals' outcomes (PipelineModule provides them): without them, no run waits for a human. */
    @Optional() @Inject(PROPOSAL_OUTCOMES) private readonly proposals?: ProposalOutcomes,
    /** Where the pipeline tells that a proposal settled: a hint to read the run's proposals at once (the sweep reads them anyway). */
    @Optional() private readonly events?: RuntimeEvents,
  ) {
    if (!registry) throw new InvalidWorkerOptionsException('AgentWorkerModule', WORKER_NEEDS_AGENTS_MESSAGE);
    this.options = resolveWorkerOptions(raw);
    if (this.options.onResult) this.listeners.add(this.options.onResult);
    this.unsubscribe = events?.subscribe((event) => {
      if (event.type === 'proposal_settled' && event.runId) void this.settleRun(event.tenantId, event.runId);
    });
  }

  /** Whether this worker's runs may wait for a human: the store keeps waits and a journal, and proposals can be read. */
  private get waits(): boolean {
    const s = this.store;
    return (
      this.proposals !== undefined && [s.suspend, s.settle, s.waiting, s.appendJournal, s.readJournal].every((m) => typeof m === 'function')
    );
  }

  /**
   * Read the proposals a waiting run waits for, from the pipeline's store (never from an event or a caller), and record
   * those decided, and those still pending past the run's wait as `expired`; the settle that completes the set resumes
   * the run (a conditional write: once, whichever instance gets there first), and this instance hands it to a slot.
   */
  private async settleRun(tenantId: string, runId: string, known?: AgentRunRecord): Promise<void> {
    const { store, proposals } = this;
    if (!this.waits || !proposals || this.stopped) return;
    try {
      const run = known ?? (await store.get(tenantId, runId));
      if (!run || run.status !== 'waiting') return;
      const ids = run.waitingFor ?? [];
      const mine = (o: ProposalOutcome | undefined): o is ProposalOutcome =>
        o !== undefined && o.runId === run.id && o.proposer === run.userId && o.agent === run.agent;
      let found = new Map((await proposals.outcomes(run.tenantId, ids)).map((o) => [o.proposalId, o]));
      const past = run.waitUntil !== null && run.waitUntil !== undefined && run.waitUntil.getTime() <= Date.now();
      const open = (o: ProposalOutcome | undefined) => mine(o) && (o.status === 'pending' || o.status === 'approved');
      // Past the wait, what is still pending is expired in the pipeline first (one conditional write there: a human's
      // decision that lands first wins), so that nobody decides it after the run was told it expired; then read again.
      const stale = ids.filter((id) => past && found.get(id)?.status === 'pending' && mine(found.get(id)));
      if (stale.length > 0 && proposals.expire) {
        await proposals.expire(run.tenantId, stale);
        found = new Map((await proposals.outcomes(run.tenantId, ids)).map((o) => [o.proposalId, o]));
      }
      const decisions: AgentRunDecision[] = [];
      for (const id of ids) {
        const o = found.get(id);
        // A run waits only on a proposal it made (its run id, its user, its agent): a tool result that merely names
        // another proposal (a skill echoing the model's words) never makes the run wait on it, nor hear its decision.
        if (!mine(o))
          decisions.push({
            proposalId: id,
            status: 'failed',
            observation: JSON.stringify({ proposalId: id, decision: 'failed', reason: NOT_THIS_RUNS_PROPOSAL_MESSAGE }),
          });
        else if (!open(o)) decisions.push({ proposalId: id, status: o.status as AgentRunDecision['status'], observation: o.observation });
        // Still open past the wait (a store that cannot expire it, or approved and executing): the run waits on.
      }
      if (decisions.length === 0) return;
      const any = this.registry.has(run.agent) && this.registry.get(run.agent).spec.resumeOn === 'each';
      const { resumed } = await (store.settle as NonNullable<AgentRunStore['settle']>).call(store, run.tenantId, run.id, decisions, {
        any,
      });
      if (resumed) {
        this.counts.resumed++;
        this.events?.emit({ type: 'run_resumed', tenantId: run.tenantId, runId: run.id, agent: run.agent });
        // Behind the goals already waiting: a tenant's many waits ending at once do not jump the queue.
        await this.goalQueue.push([run.id]);
      }
    } catch (err) {
      this.bookkeepingError(`resuming waiting run ${runId}`, err);
    }
  }

  /**
   * The sweep's part for waiting runs: each is read again (a decision no event told of, a wait past its end). One at a
   * time on this instance: a sweep slower than leaseMs is not started again beside itself.
   */
  private async sweepWaits(): Promise<void> {
    if (!this.waits || this.stopped || this.sweepingWaits) return;
    this.sweepingWaits = true;
    try {
      const waiting = this.store.waiting as NonNullable<AgentRunStore['waiting']>;
      // Those whose wait ends first (a wait past its end is expired at once), and the next page of all of them in id
      // order (the sweep goes round: a decision no event told of is read within a few sweeps, however many wait).
      const soonest = await waiting.call(this.store, RECOVER_LIMIT);
      const page = await waiting.call(this.store, RECOVER_LIMIT, this.waitCursor);
      this.waitCursor = page.length < RECOVER_LIMIT ? '' : page[page.length - 1].id;
      const seen = new Set<string>();
      for (const run of [...soonest, ...page]) {
        if (seen.has(run.id) || this.stopped) continue;
        seen.add(run.id);
        await this.settleRun(run.tenantId, run.id, run);
      }
    } catch (err) {
      this.bookkeepingError('reading waiting runs', err);
    } finally {
      this.sweepingWaits = false;
    }
  }

  /** Store a goal as a queued run and hand it to a slot. Never waits for the run; throws MailboxFullException when full. */
  async post(goal: string, scope: PostGoalOptions): Promise<{ runId: string }> {
    const { options, store } = this.require();
    const agent = this.validGoal(goal, scope, options);
    const waiting = this.waiting();
    if (waiting >= options.mailboxSize) {
      this.counts.rejected++;
      throw new MailboxFullException(options.mailboxSize, this.retryAfterSeconds(waiting - options.mailboxSize + 1, 1));
    }
    const run = newRun(agent, goal, scope, options.maxAttempts);
    await new Promise<void>((resolve, reject) => {
      this.pending.push({ run, resolve, reject });
      this.scheduleFlush(store);
    });
    return { runId: run.id };
  }

  /**
   * Run a goal now, on this instance, as a stored run: the caller waits for it (a synchronous HTTP run does), and the
   * run is kept like a posted one (its record, its journal; GET /agents/runs/:id reads it). It ends as a posted run
   * does: `succeeded` or `failed`; `waiting` for a human (its proposals in `waitingFor`; once they are decided the run
   * goes on in the background, on whichever instance sees the decision first, and `onResult` listeners hear its end);
   * or `interrupted` (a shutdown, a lost lease: it is retried in the background from its journal). `signal` aborts it
   * (the client went away), `onEvent` tells its steps and text as they come. `result` is what the agent returned (none
   * when the run was taken by a slot before this call could claim it: then this call waits for its record to end or
   * wait, at most the agent's run timeout). Throws InvalidGoalException as post does, and the store's errors (a
   * database away) before the run starts.
   */
  async run(
    goal: string,
    scope: PostGoalOptions & {
      readonly signal?: AbortSignal;
      readonly onEvent?: AgentRunContext['onEvent'];
      /** Told the run's id once it is stored, before it starts (e.g. to send it to the caller first). */
      readonly onStored?: (runId: string) => void;
    },
  ): Promise<AgentRunRecord & { readonly result?: AgentRunResult }> {
    const { options, store } = this.require();
    const agent = this.validGoal(goal, scope, options);
    const run = newRun(agent, goal, scope, options.maxAttempts);
    // Not bounded by the mailbox: it does not wait for a slot, the caller's request carries it.
    await store.insert([run]);
    try {
      scope.onStored?.(run.id);
    } catch (err) {
      this.bookkeepingError(`telling that run ${run.id} is stored`, err);
    }
    // Shutting down: stored as queued, it runs in the background (another instance, or this app once it is back).
    if (this.stopped) return this.ended(scope.tenantId, run.id, 0);
    const claimSent = Date.now();
    const claimed = await store.claim(run.id, this.instanceId, options.leaseMs);
    if (claimed && claimed.status !== 'failed') {
      // The shutdown began during the claim (its heartbeat may be gone): given back, as a slot's run would be.
      if (this.stopped) {
        await store.release(
          { runId: run.id, owner: this.instanceId, attempt: claimed.attempts },
          SHUTDOWN_INTERRUPTED_MESSAGE(options.shutdownGraceMs),
        );
        return this.ended(scope.tenantId, run.id, 0);
      }
      this.claims.push(Date.now());
      const running = this.execute(claimed, claimSent, options, store, scope);
      // The shutdown gives it the grace a slot's run gets (shutdownGraceMs) before it is aborted.
      this.callerRuns.add(running);
      try {
        const { record, result } = await running;
        return { ...record, ...(result ? { result } : {}) };
      } finally {
        this.callerRuns.delete(running);
      }
    }
    // A recovery sweep handed the queued run to a slot between the insert and the claim: it runs there; wait for it.
    return this.ended(scope.tenantId, run.id, this.registry.get(agent).spec.runTimeoutMs ?? DEFAULT_RUN_TIMEOUT_MS, scope.signal);
  }

  /** The run once it ended or waits (polled), or as it stands after `ms` or when `signal` aborts. */
  private async ended(tenantId: string, runId: string, ms: number, signal?: AbortSignal): Promise<AgentRunRecord> {
    const until = Date.now() + ms;
    for (;;) {
      const record = await this.store.get(tenantId, runId);
      if (!record) throw new Error(`run ${runId} was stored and is gone`);
      if (!['queued', 'running'].includes(record.status) || Date.now() >= until || signal?.aborted) return record;
      await new Promise((r) => setTimeout(r, ENDED_POLL_MS));
    }
  }

  /**
   * Read again now what a waiting run of the tenant waits for (the pipeline's store, never the caller's word) and, if
   * every proposal is decided, resume it: it goes on in the background, on this instance or another (once, whichever
   * sees the last decision first). The sweep and the pipeline's event do the same; this is for a caller who knows a
   * decision was made (a UI after its approve). Returns the run as it stands after (null for another tenant's or an
   * unknown id); `status: 'queued'` or later when it was resumed.
   */
  async resume(tenantId: string, runId: string): Promise<AgentRunRecord | null> {
    const run = await this.get(tenantId, runId);
    if (!run) return null;
    if (run.status === 'waiting') await this.settleRun(run.tenantId, run.id, run);
    return this.store.get(tenantId, runId);
  }

  /**
   * Check a goal and its scope as post does, without posting it: throws the InvalidGoalException post would (bad
   * tenant, user, permissions or agent, an empty or too long goal).
   */
  check(goal: string, scope: PostGoalOptions): void {
    this.validGoal(goal, scope, this.require().options);
  }

  /** The agent a valid goal runs on; throws InvalidGoalException otherwise. */
  private validGoal(goal: string, scope: PostGoalOptions, options: ResolvedAgentWorkerOptions): string {
    if (!scope || typeof scope !== 'object')
      throw new InvalidGoalException('post needs a scope: post(goal, { tenantId, userId, permissions })');
    const agent = this.agentFor(scope.agent);
    const tenantProblem = scopeIdProblem('tenantId', scope.tenantId);
    if (tenantProblem) throw new InvalidGoalException(tenantProblem);
    const userProblem = scopeIdProblem('userId', scope.userId);
    if (userProblem) throw new InvalidGoalException(userProblem);
    if (
      !Array.isArray(scope.permissions) ||
      scope.permissions.length > MAX_PERMISSIONS ||
      scope.permissions.some((p) => typeof p !== 'string' || p.length > MAX_SCOPE_PART || CONTROL.test(p))
    )
      throw new InvalidGoalException(
        `permissions must be an array of at most ${MAX_PERMISSIONS} codes of at most ${MAX_SCOPE_PART} characters, without control characters`,
      );
    for (const [name, value] of [
      ['jobId', scope.jobId],
      ['jobTick', scope.jobTick],
    ] as const)
      if (value !== undefined && (typeof value !== 'string' || !value || value.length > MAX_SCOPE_PART || CONTROL.test(value)))
        throw new InvalidGoalException(
          `${name}, when given, must be a string of 1 to ${MAX_SCOPE_PART} characters without control characters`,
        );
    if (typeof goal !== 'string' || !goal.trim()) throw new InvalidGoalException('the goal is empty');
    if (GOAL_CONTROL.test(goal) || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(goal))
      throw new InvalidGoalException(
        'the goal holds a NUL, a control character or a lone surrogate: send plain text (newlines and tabs are fine)',
      );
    if (goal.length > options.maxGoalLength)
      throw new InvalidGoalException(`the goal has ${goal.length} characters, more than maxGoalLength (${options.maxGoalLength})`);
    return agent;
  }

  /** A run of this tenant (null for another tenant's id, an unknown id, or an empty tenant). */
  async get(tenantId: string, runId: string): Promise<AgentRunRecord | null> {
    const { store } = this.require();
    if (scopeIdProblem('tenantId', tenantId) || typeof runId !== 'string' || !runId || runId.length > MAX_SCOPE_PART || CONTROL.test(runId))
      return null;
    return store.get(tenantId, runId);
  }

  /**
   * A run's journal as a caller may read it (the tenant's run only; none when the store keeps no journal): its model
   * turns (their text, and the names and ids of the calls they asked for: the arguments are shown by each call's
   * record, as the dispatcher showed them) and its tool calls, waits and decisions, in order. With `page`, the entries
   * after `afterSeq`, at most `limit`.
   */
  async journal(tenantId: string, runId: string, page?: JournalPage): Promise<RunJournalEntry[]> {
    const read = this.store.readJournal;
    if (typeof read !== 'function' || scopeIdProblem('tenantId', tenantId)) return [];
    const bounds = journalPage(page);
    const entries = await read.call(this.store, tenantId, runId, page ? bounds : undefined);
    // A store of yours that reads the whole journal whatever the page: the page is taken here.
    const paged = page ? entries.filter((e) => e.seq > bounds.afterSeq).slice(0, bounds.limit) : entries;
    return paged.map((e) =>
      e.kind === 'turn'
        ? {
            ...e,
            turn: { ...e.turn, toolCalls: e.turn.toolCalls.map((c) => ({ id: c.id, name: c.name }) as (typeof e.turn.toolCalls)[number]) },
          }
        : e,
    );
  }

  /** Listen to finished runs, and to runs that start to wait for a human (status `waiting`); returns the unsubscribe. A listener that throws is logged and counted, nothing more. */
  onResult(listener: AgentResultListener): () => void {
    if (typeof listener !== 'function') throw new TypeError('onResult needs a function (result) => void');
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  stats(): AgentWorkerStats {
    return { queued: this.waiting(), running: this.running.size, ...this.counts, unhandledRejections: unhandledRejectionCounts() };
  }

  /** Start the slots and hand them the runs left queued or interrupted (by a shutdown, or a dead instance). */
  onApplicationBootstrap(): Promise<void> {
    // One start, shared: the job scheduler awaits it too, so its first post finds the slots started.
    return (this.startup ??= this.start(this.options, this.store, this.goalQueue));
  }

  private async start(options: ResolvedAgentWorkerOptions, store: AgentRunStore, queue: GoalQueue): Promise<void> {
    await queue.start((runId) => this.handle(runId, options, store), options.concurrency);
    this.started = true;
    this.startedAt = Date.now();
    this.storedBeforeStart = 0; // the recovery below hands them to the queue
    if (queue.shared) {
      await this.countShared(store);
      this.countTimer = setInterval(() => void this.countShared(store), SHARED_COUNT_MS);
      this.countTimer.unref?.();
    }
    this.heartbeatTimer = setInterval(() => void this.heartbeat(options, store), options.heartbeatMs);
    // Pick up runs of instances that died (expired leases) and runs beyond what one recovery pushed.
    this.sweepTimer = setInterval(() => void this.recover(options, store).then(() => this.sweepWaits()), options.leaseMs);
    this.heartbeatTimer.unref?.();
    this.sweepTimer.unref?.();
    await this.recover(options, store);
    // Not awaited: the start does not wait on reading every waiting run's proposals (the sweep timer goes on with it).
    void this.sweepWaits();
  }

  /** Stop taking goals; running ones get shutdownGraceMs, then are aborted and stored as interrupted. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.stopped) return;
    const { options, store, queue } = this.require();
    this.stopped = true;
    this.unsubscribe?.();
    clearInterval(this.sweepTimer); // the heartbeat keeps the running leases until the end
    clearTimeout(this.soonTimer);
    clearInterval(this.countTimer);
    await Promise.all([queue.stop(options.shutdownGraceMs), settledWithin(this.callerRuns, options.shutdownGraceMs)]);
    if (this.running.size) {
      for (const goal of this.running.values()) {
        goal.stop = 'shutdown';
        goal.controller.abort(new Error(SHUTDOWN_INTERRUPTED_MESSAGE(options.shutdownGraceMs)));
      }
      await queue.stop(ABORT_WAIT_MS);
      // A run that ignores its abort signal: give its lease back anyway (its late finish is then refused).
      for (const goal of [...this.running.values()]) await this.interrupt(store, goal, options);
    }
    clearInterval(this.heartbeatTimer);
    try {
      // Cluster mode: the runs given back go to the shared queue now, for another instance to take at once.
      if (queue.shared && this.givenBack.length) await queue.push(this.givenBack, { first: true });
    } catch (err) {
      this.bookkeepingError('handing interrupted runs back to the shared queue', err);
    }
    try {
      await queue.close?.();
    } catch (err) {
      this.bookkeepingError('closing the goal queue', err);
    }
  }

  private require(): { options: ResolvedAgentWorkerOptions; store: AgentRunStore; queue: GoalQueue } {
    return { options: this.options, store: this.store, queue: this.goalQueue };
  }

  private agentFor(name: string | undefined): string {
    if (name === undefined) {
      const agents = this.registry.list();
      if (agents.length !== 1)
        throw new InvalidGoalException(
          `name the agent: this application defines ${agents.length} agents (${agents.map((a) => a.name).join(', ')})`,
        );
      return agents[0].name;
    }
    if (typeof name !== 'string' || !this.registry.has(name)) {
      const known = this.registry.list().map((a) => a.name);
      throw new InvalidGoalException(`no agent named '${String(name)}' (agents: ${known.join(', ') || 'none'})`);
    }
    return name;
  }

  /** Goals waiting: posted here and not stored yet, plus the queue's (this instance's, or the cluster's stored count). */
  private waiting(): number {
    const local = this.pending.length + this.storing + this.storedBeforeStart;
    const queue = this.goalQueue;
    if (queue?.shared) return local + this.sharedQueued + this.sharedPostedSince;
    return local + (queue?.size ?? 0);
  }

  /** Cluster mode: read the number of queued runs of every instance (the shared mailbox), and the cluster's drain. */
  private async countShared(store: AgentRunStore): Promise<void> {
    try {
      const posted = this.sharedPostedSince;
      const mailbox = await store.mailbox(DRAIN_WINDOW_MS);
      this.sharedQueued = mailbox.queued;
      this.sharedClaimed = mailbox.claimed;
      this.sharedPostedSince -= posted;
    } catch (err) {
      this.logger.warn(`AgentWorker could not count the queued runs (the mailbox bound uses the last count): ${safeText(err)}`);
    }
  }

  /**
   * How fast the mailbox drains, in runs started per second: measured over the last DRAIN_WINDOW_MS, by the run store
   * for the whole cluster (cluster mode) or on this instance (in-process; since its start when that is more recent).
   */
  private drainPerSecond(): number {
    const now = Date.now();
    if (this.goalQueue?.shared) return (this.sharedClaimed * 1000) / DRAIN_WINDOW_MS;
    while (this.claims.length && this.claims[0] <= now - DRAIN_WINDOW_MS) this.claims.shift();
    return (this.claims.length * 1000) / Math.max(1000, Math.min(DRAIN_WINDOW_MS, now - this.startedAt));
  }

  /**
   * Retry-After, in seconds: the time until `toDrain` more of the waiting runs in the way have started, at the measured
   * drain rate times `share` (the fraction of the drain that is theirs: 1 for the whole mailbox, a tenant's part of the
   * waiting runs for its share), bounded to [RETRY_AFTER_MIN_S, RETRY_AFTER_MAX_S].
   */
  private retryAfterSeconds(toDrain: number, share: number): number {
    const rate = this.drainPerSecond() * share;
    if (!(rate > 0)) return RETRY_AFTER_MAX_S;
    return Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, Math.ceil(Math.max(1, toDrain) / rate)));
  }

  /**
   * The refusal of a post the store did not admit: over the whole mailbox (cluster mode: the store saw `waiting` runs
   * waiting in all), or over its tenant's share (`waiting` runs of the tenant).
   */
  private refusal(refused: RefusedRun, options: ResolvedAgentWorkerOptions): MailboxFullException {
    this.counts.rejected++;
    if (refused.bound === 'mailbox')
      return new MailboxFullException(options.mailboxSize, this.retryAfterSeconds(refused.waiting - options.mailboxSize + 1, 1));
    const share = Math.min(1, refused.waiting / Math.max(1, this.waiting(), refused.waiting));
    return new MailboxFullException(
      options.mailboxSize,
      this.retryAfterSeconds(refused.waiting - options.mailboxPerTenant + 1, share),
      options.mailboxPerTenant,
    );
  }

  private scheduleFlush(store: AgentRunStore): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => void this.flush(store));
  }

  /**
   * One INSERT for every post since the last flush; then the runs go to the slots. When the batch INSERT fails,
   * each post is stored on its own, so one bad row (or one caller's) never fails the others' posts.
   */
  private async flush(store: AgentRunStore): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (!batch.length) return;
    const options = this.options as ResolvedAgentWorkerOptions;
    // Cluster mode: the store bounds the whole mailbox too, atomically (the count read every second only refuses early).
    const limits: AgentRunLimits = this.goalQueue?.shared
      ? { perTenant: options.mailboxPerTenant, total: options.mailboxSize }
      : { perTenant: options.mailboxPerTenant };
    this.storing += batch.length;
    let stored: PendingPost[] = [];
    /** Store posts; the ones over a bound are refused (MailboxFullException), the others stored. */
    const insert = async (posts: PendingPost[]) => {
      const refused = new Map(
        (
          (
            await store.insert(
              posts.map((p) => p.run),
              limits,
            )
          )?.refused ?? []
        ).map((r) => [r.runId, r]),
      );
      for (const p of posts) {
        const over = refused.get(p.run.id);
        if (over) p.reject(this.refusal(over, options));
        else stored.push(p);
      }
    };
    try {
      await insert(batch);
    } catch (err) {
      stored = [];
      if (batch.length === 1) batch[0].reject(err);
      else
        for (const p of batch) {
          try {
            await insert([p]);
          } catch (one) {
            p.reject(one);
          }
        }
    } finally {
      this.storing -= batch.length;
    }
    if (!stored.length) return;
    const queue = this.goalQueue as GoalQueue;
    // The slots take them before the posts resolve, so the mailbox count never misses them. Before the start (or
    // after the stop) they stay queued in the store: the next start's recovery (any instance's, in cluster mode)
    // hands them over.
    if (!this.started) this.storedBeforeStart += stored.length;
    else if (queue.shared) this.sharedPostedSince += stored.length;
    if (this.started && !this.stopped)
      try {
        await queue.push(stored.map((p) => p.run.id));
      } catch (err) {
        // Stored, so not lost: the next recovery sweep hands them over.
        this.bookkeepingError('handing stored runs to the queue (the next sweep retries)', err);
      }
    for (const p of stored) p.resolve();
  }

  /** The store's clock of this worker: see AgentRunClock (an outage is a gap of a lease less a heartbeat; grace: a lease). */
  private clock(options: ResolvedAgentWorkerOptions): AgentRunClock {
    return { outageMs: options.leaseMs - options.heartbeatMs, graceMs: options.leaseMs };
  }

  private async recover(options: ResolvedAgentWorkerOptions, store: AgentRunStore): Promise<void> {
    const queue = this.goalQueue as GoalQueue;
    if (this.stopped) return;
    try {
      // Runs that ended here while the database was away hold their leases until their outcome is stored: renew them
      // first, so this very sweep never takes one back (to run its goal again) because its lease lapsed meanwhile.
      const ended = [...this.running.values()].filter((goal) => goal.ended).map((goal) => goal.lease);
      if (ended.length) await store.heartbeat(ended, options.leaseMs, this.clock(options));
      const { interrupted, queued } = await store.recoverable(RECOVER_LIMIT, this.clock(options));
      // Runs taken back (their instance died or stopped) go first, before newer goals, whatever the mailbox holds: they
      // were accepted long ago. Queued ones are handed over as far as the mailbox has room.
      if (interrupted.length) await queue.push(interrupted, { first: true });
      const room = queue.shared ? Math.min(options.mailboxSize, RECOVER_LIMIT) : options.mailboxSize - (queue.size ?? 0);
      if (room > 0 && queued.length) await queue.push(queued.slice(0, room));
      this.soonDelayMs = RECOVER_SOON_FIRST_MS;
    } catch (err) {
      this.bookkeepingError('recovering queued runs', err);
      if (isDatabaseUnavailable(err)) this.recoverSoon(options, store);
    }
  }

  /**
   * The store failed (a claim, a renewal, a recovery: the database went away): recover again soon rather than at the
   * next sweep, so runs whose claim failed, or whose lease lapsed meanwhile, run again within seconds of the database
   * coming back, not a lease period later. Waits double up to leaseMs until a recovery succeeds.
   */
  private recoverSoon(options: ResolvedAgentWorkerOptions, store: AgentRunStore): void {
    if (this.stopped || this.soonTimer) return;
    const wait = this.soonDelayMs;
    this.soonDelayMs = Math.min(wait * 2, options.leaseMs);
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      void this.recover(options, store);
    }, wait);
    this.soonTimer.unref?.();
  }

  /**
   * Every heartbeatMs, running or idle: renew the leases held here, and tell the store this instance reached it (its
   * clock of contacts: a gap in which no instance reached it is an outage, see AgentRunClock).
   */
  private async heartbeat(options: ResolvedAgentWorkerOptions, store: AgentRunStore): Promise<void> {
    // Fencing: a run whose lease would expire before the next renewal (renewals failing or hanging) is stopped now,
    // before another instance's sweep may hand it over and run it a second time.
    const now = Date.now();
    for (const [runId, goal] of this.running) if (now - goal.renewedAt >= options.leaseMs - options.heartbeatMs) this.leaseLost(runId);
    const goals = [...this.running.values()];
    try {
      const lost = new Set(
        await store.heartbeat(
          goals.map((goal) => goal.lease),
          options.leaseMs,
          this.clock(options),
        ),
      );
      this.pulseFailing = false;
      for (const goal of goals) {
        const runId = goal.lease.runId;
        if (lost.has(runId)) this.leaseLost(runId);
        else if (this.running.get(runId) === goal) goal.renewedAt = Math.max(goal.renewedAt, now);
      }
    } catch (err) {
      if (goals.length) this.bookkeepingError('renewing leases', err);
      else if (!this.pulseFailing) this.logger.warn(`AgentWorker could not reach the run store (idle): ${safeText(err)}`);
      this.pulseFailing = !goals.length;
      if (isDatabaseUnavailable(err)) this.recoverSoon(options, store);
    }
  }

  private leaseLost(runId: string): void {
    const goal = this.running.get(runId);
    // An ended run keeps trying to store its outcome, and a run writing its journal keeps trying the write: both fenced
    // on the lease in the store.
    if (!goal || goal.stop || goal.ended || goal.writing) return;
    goal.stop = 'lease_lost';
    goal.controller.abort(new Error(LEASE_LOST_MESSAGE));
  }

  private async handle(runId: string, options: ResolvedAgentWorkerOptions, store: AgentRunStore): Promise<void> {
    // A copy of this run still winds down here (its lease was lost, its abort not yet honoured): never a second one
    // beside it. The run stays queued or interrupted in the store, and a later sweep hands it over again.
    if (this.running.has(runId)) return;
    let claimed: AgentRunRecord | null;
    const claimSent = Date.now();
    try {
      claimed = await store.claim(runId, this.instanceId, options.leaseMs);
    } catch (err) {
      // Still queued (or interrupted) in the store: a recovery hands it over again once the store answers.
      this.bookkeepingError(`claiming run ${runId}`, err);
      if (isDatabaseUnavailable(err)) this.recoverSoon(options, store); // otherwise the next sweep: no loop on a bug
      return;
    }
    if (!claimed) return;
    this.claims.push(Date.now());
    if (claimed.status === 'failed') {
      // Out of attempts (interrupted too often): stored as failed by this claim, reported like any result.
      this.counts.failed++;
      await this.deliver(claimed);
      return;
    }
    await this.execute(claimed, claimSent, options, store);
  }

  /**
   * Run a claimed run on this instance (a slot's, or a caller's in `run`): its journal replayed, every step journaled,
   * and its end stored: final, waiting for a human, or given back (a shutdown, a lost lease). Returns the run as stored,
   * and the result when the agent returned one.
   */
  private async execute(
    claimed: AgentRunRecord,
    claimSent: number,
    options: ResolvedAgentWorkerOptions,
    store: AgentRunStore,
    caller: { readonly signal?: AbortSignal; readonly onEvent?: AgentRunContext['onEvent'] } = {},
  ): Promise<{ readonly record: AgentRunRecord; readonly result?: AgentRunResult }> {
    const runId = claimed.id;
    const lease: AgentRunLease = { runId, owner: this.instanceId, attempt: claimed.attempts };
    const goal: RunningGoal = { controller: new AbortController(), lease, renewedAt: claimSent };
    const given = (): { record: AgentRunRecord; result?: AgentRunResult } => ({
      record: { ...claimed, status: 'interrupted', leaseOwner: null, leaseUntil: null },
      ...(result ? { result } : {}),
    });
    this.running.set(runId, goal);
    let result: AgentRunResult | undefined;
    let crash: string | undefined;
    try {
      // What earlier attempts of the run did (their process died, or it waited for a human): replayed, not asked of the
      // model or run again; the decisions it waited for come in as the results of the calls that proposed.
      const journal = await this.journalOf(store, claimed, goal);
      const signal = caller.signal ? AbortSignal.any([goal.controller.signal, caller.signal]) : goal.controller.signal;
      result = await this.registry.get(claimed.agent).run(claimed.goal, {
        tenantId: claimed.tenantId,
        userId: claimed.userId,
        permissions: claimed.permissions,
        runId,
        signal,
        ...(caller.onEvent ? { onEvent: caller.onEvent } : {}),
        ...(journal ? { journal, waitForApprovals: this.waits } : {}),
      });
    } catch (err) {
      crash = RUN_CRASHED_MESSAGE(safeText(err));
    }
    try {
      if (this.running.get(runId) !== goal) return given(); // released at shutdown already
      if (goal.stop === 'shutdown') {
        await this.interrupt(store, goal, options);
        return given();
      }
      if (result?.stoppedReason === 'waiting' && this.waits) {
        goal.ended = true;
        const waiting = await this.suspend(store, goal, claimed, result);
        return waiting ? { record: waiting, result } : given();
      }
      const outcome = toOutcome(result, crash, this.skills);
      goal.ended = true;
      if (goal.stop === 'lease_lost' || !(await this.storeOutcome(store, lease, claimed.tenantId, outcome))) {
        this.counts.interrupted++;
        this.logger.warn(`Run ${runId}: ${LEASE_LOST_MESSAGE}`);
        this.recoverSoon(options, store); // its lapsed lease is taken back and the run handed over again
        return given();
      }
      this.counts[outcome.status]++;
      const record: AgentRunRecord = { ...claimed, ...outcome, leaseOwner: null, leaseUntil: null, finishedAt: new Date() };
      await this.deliver(record);
      return { record, ...(result ? { result } : {}) };
    } catch (err) {
      this.bookkeepingError(`storing the outcome of run ${runId}`, err);
      return given();
    } finally {
      if (this.running.get(runId) === goal) this.running.delete(runId);
    }
  }

  /**
   * The run's journal, when the store keeps one: its entries so far, and an append fenced on this claim. While the
   * database cannot be reached, a read or a write is tried again (waits doubling to 5 s) until it answers, the worker
   * stops or the run is aborted (its lease lost): the run holds its slot meanwhile, and its heartbeat renews the lease
   * once the database is back. Another failure ends the run (a journal it cannot write, it may not go on without).
   */
  private async journalOf(store: AgentRunStore, claimed: AgentRunRecord, goal: RunningGoal): Promise<RunJournal | undefined> {
    const { appendJournal, readJournal } = store;
    if (typeof appendJournal !== 'function' || typeof readJournal !== 'function') return undefined;
    let entries = await this.whileUnavailable(goal, `reading the journal of run ${claimed.id}`, () =>
      readJournal.call(store, claimed.tenantId, claimed.id),
    );
    // A resumed run: the decisions it waited for, journaled (once each) before it goes on.
    const journaled = new Set(entries.flatMap((e) => (e.kind === 'decision' ? [e.proposalId] : [])));
    const fresh = (claimed.decisions ?? []).filter((d) => !journaled.has(d.proposalId));
    if (fresh.length > 0) {
      const step = entries.reduce((n, e) => Math.max(n, e.step), 0);
      const added: RunJournalEntry[] = fresh.map((d, i) => ({
        kind: 'decision',
        seq: entries.length + i,
        step,
        proposalId: d.proposalId,
        status: d.status,
        observation: d.observation,
      }));
      const stored = await this.whileUnavailable(goal, `writing the journal of run ${claimed.id}`, () =>
        appendJournal.call(store, goal.lease, added, this.options.leaseMs),
      );
      if (!stored) throw new Error(LEASE_LOST_MESSAGE);
      entries = [...entries, ...added];
    }
    return {
      entries,
      append: async (batch) => {
        goal.writing = true;
        try {
          let sent = Date.now();
          const stored = await this.whileUnavailable(goal, `writing the journal of run ${claimed.id}`, () => {
            sent = Date.now();
            return appendJournal.call(store, goal.lease, batch, this.options.leaseMs);
          });
          // The write renewed the lease (a proof of life, as a heartbeat's): from when it was sent.
          if (stored) goal.renewedAt = Math.max(goal.renewedAt, sent);
          return stored;
        } finally {
          goal.writing = false;
        }
      },
    };
  }

  private async whileUnavailable<T>(goal: RunningGoal, what: string, work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (err) {
        if (this.stopped || goal.controller.signal.aborted || !isDatabaseUnavailable(err)) throw err;
        if (attempt === 1) this.logger.warn(`Run ${goal.lease.runId}: ${what} waits for the database (${safeText(err)})`);
        await new Promise((r) => setTimeout(r, Math.min(OUTCOME_RETRY_FIRST_MS * 2 ** (attempt - 1), OUTCOME_RETRY_MAX_MS)));
      }
    }
  }

  /** A run that waits for a human: stored as waiting (its lease released), then its proposals read at once. */
  private async suspend(
    store: AgentRunStore,
    goal: RunningGoal,
    claimed: AgentRunRecord,
    result: AgentRunResult,
  ): Promise<AgentRunRecord | null> {
    const agent = this.registry.get(claimed.agent);
    const wait: AgentRunWait = {
      proposalIds: result.pendingApprovals.map((p) => p.proposalId),
      waitMs: agent.spec.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
      answer: result.answer,
      steps: storedSteps(result.steps, this.skills),
      pendingApprovals: result.pendingApprovals,
      maxPerTenant: this.options.maxWaitingPerTenant,
    };
    const suspended = await this.whileUnavailable(goal, `storing the wait of run ${claimed.id}`, () =>
      (store.suspend as NonNullable<AgentRunStore['suspend']>).call(store, goal.lease, wait),
    );
    if (suspended === 'full') {
      // Its tenant has as many runs waiting as it may: this one ends at its proposals (they stay in the approval queue,
      // and a decision still executes them), told as a failure, not left running or waiting beyond the bound.
      const outcome: AgentRunOutcome = {
        status: 'failed',
        answer: result.answer,
        stoppedReason: 'waiting',
        steps: wait.steps,
        pendingApprovals: result.pendingApprovals,
        error: WAITING_FULL_MESSAGE(this.options.maxWaitingPerTenant),
      };
      if (!(await this.storeOutcome(store, goal.lease, claimed.tenantId, outcome))) return null;
      this.counts.failed++;
      const record: AgentRunRecord = { ...claimed, ...outcome, leaseOwner: null, leaseUntil: null, finishedAt: new Date() };
      await this.deliver(record);
      return record;
    }
    if (!suspended) {
      this.counts.interrupted++;
      this.logger.warn(`Run ${claimed.id}: ${LEASE_LOST_MESSAGE}`);
      return null;
    }
    this.counts.waiting++;
    const record: AgentRunRecord = {
      ...claimed,
      status: 'waiting',
      answer: wait.answer,
      stoppedReason: 'waiting',
      steps: wait.steps,
      pendingApprovals: wait.pendingApprovals,
      error: null,
      leaseOwner: null,
      leaseUntil: null,
      waitingFor: [...new Set(wait.proposalIds)],
      waitUntil: new Date(Date.now() + wait.waitMs),
      decisions: [],
    };
    // Listeners hear of the wait (e.g. to tell the user a decision is asked for); they hear of the outcome later.
    await this.deliver(record);
    // A decision made between the proposal and this write: told by no event after it, read once this run has left its
    // slot and the queue (a push while the queue still holds the id would be dropped as a duplicate).
    const timer = setTimeout(() => void this.settleRun(claimed.tenantId, claimed.id), 0);
    timer.unref?.();
    return record;
  }

  /**
   * Store a finished run's outcome. The run has done its work, so while the database cannot be reached the write is
   * tried again (waits doubling to 5 s) until it answers or the worker stops: running the goal again after its lease
   * expired would repeat its calls. The write stays conditional on this instance's lease (false: another took it over).
   * The run keeps its slot and its heartbeat meanwhile, so its lease is renewed as soon as the database is back.
   */
  private async storeOutcome(store: AgentRunStore, lease: AgentRunLease, tenantId: string, outcome: AgentRunOutcome): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (await store.finish(lease, outcome)) return true;
        // Refused after a failed try: that try may have committed with its answer lost (the connection ended before the
        // reply). Then the run holds this very outcome under this claim's attempt (any later claim bumps it): it is ours.
        return attempt > 1 && (await this.landed(store, lease, tenantId, outcome));
      } catch (err) {
        if (this.stopped || (!isDatabaseUnavailable(err) && attempt >= OUTCOME_TRIES)) throw err;
        if (attempt === 1)
          this.logger.warn(`Run ${lease.runId} ended; its outcome is stored when the database answers again (${safeText(err)})`);
        await new Promise((r) => setTimeout(r, Math.min(OUTCOME_RETRY_FIRST_MS * 2 ** (attempt - 1), OUTCOME_RETRY_MAX_MS)));
      }
    }
  }

  /** Whether the run is final with `outcome`, under the claim of `lease` (an earlier finish committed, its answer lost). */
  private async landed(store: AgentRunStore, lease: AgentRunLease, tenantId: string, outcome: AgentRunOutcome): Promise<boolean> {
    const run = await store.get(tenantId, lease.runId);
    return (
      run !== null &&
      run.attempts === lease.attempt &&
      run.status === outcome.status &&
      run.answer === outcome.answer &&
      run.error === outcome.error
    );
  }

  /** Give a run's lease back at shutdown (stored as interrupted, retried later; in cluster mode, pushed for another instance). */
  private async interrupt(store: AgentRunStore, goal: RunningGoal, options: ResolvedAgentWorkerOptions): Promise<void> {
    const { runId } = goal.lease;
    if (this.running.get(runId) === goal) this.running.delete(runId);
    try {
      if (await store.release(goal.lease, SHUTDOWN_INTERRUPTED_MESSAGE(options.shutdownGraceMs))) {
        this.counts.interrupted++;
        this.givenBack.push(runId);
      }
    } catch (err) {
      this.bookkeepingError(`releasing run ${runId}`, err);
    }
  }

  private async deliver(record: AgentRunRecord): Promise<void> {
    for (const listener of [...this.listeners]) {
      try {
        await listener(record);
      } catch (err) {
        this.counts.handlerErrors++;
        this.logger.error(`An onResult listener failed on run ${record.id}: ${safeText(err)}`);
      }
    }
  }

  private bookkeepingError(what: string, err: unknown): void {
    this.counts.handlerErrors++;
    this.logger.error(`AgentWorker failed ${what}: ${safeText(err)}`);
  }
}

/** A goal as the run store takes it: a new id, the caller's scope (its permissions copied), its origin if a job's. */
function newRun(agent: string, goal: string, scope: PostGoalOptions, maxAttempts: number): NewAgentRun {
  return {
    id: randomUUID(),
    agent,
    goal,
    tenantId: scope.tenantId,
    userId: scope.userId,
    permissions: [...scope.permissions],
    maxAttempts,
    ...(scope.jobId !== undefined ? { jobId: scope.jobId, jobTick: scope.jobTick } : {}),
  };
}

/**
 * The steps as the run store keeps them: the arguments and the observation of a call to a skill declared with
 * `audit: { args: 'digest' }` or `{ result: 'digest' }` (the memory skills: what a user erases must leave no copy) are
 * kept as their digest, as the audit log keeps them. The model's own text is kept as it came.
 */
export function storedSteps(steps: readonly AgentStep[], skills: SkillRegistry | undefined): AgentStep[] {
  if (!skills) return [...steps];
  return steps.map((step) => ({
    ...step,
    toolCalls: step.toolCalls.map((call) => {
      const kept = skills.get(call.name)?.audit;
      if (!kept || (kept.args !== 'digest' && kept.result !== 'digest')) return call;
      return {
        ...call,
        arguments: kept.args === 'digest' ? (auditDigest(call.arguments) ?? {}) : call.arguments,
        observation: kept.result === 'digest' ? JSON.stringify(auditDigest(call.observation) ?? null) : call.observation,
      };
    }),
  }));
}

function toOutcome(result: AgentRunResult | undefined, crash: string | undefined, skills?: SkillRegistry): AgentRunOutcome {
  if (!result)
    return {
      status: 'failed',
      answer: null,
      stoppedReason: null,
      steps: [],
      pendingApprovals: [],
      error: crash ?? 'The run returned no result.',
    };
  const failed = result.error !== undefined || FAILED_REASONS.has(result.stoppedReason);
  return {
    status: failed ? 'failed' : 'succeeded',
    answer: result.answer,
    stoppedReason: result.stoppedReason,
    steps: storedSteps(result.steps, skills),
    pendingApprovals: result.pendingApprovals,
    error: result.error ?? (failed ? `The run stopped: ${result.stoppedReason}.` : null),
  };
}
