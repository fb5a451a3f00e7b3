import { Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '@zmodu/core';
import type { ConstructorOptions, Job, PgBoss } from 'pg-boss';
import { safeText } from '../error-text';
import { InvalidWorkerOptionsException } from '../exceptions/invalid-worker-options.exception';
import { loadPgBoss, PgBossClass } from './load-pg-boss';
import { holdUnhandledRejectionNet } from './unhandled-rejection-net';
import { GoalQueue, PushOptions, settledWithin } from './worker.ports';

/** Where pg-boss connects: a URL, or the fields of the app's DataSource. */
export interface PgBossConnection {
  readonly connectionString?: string;
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
  readonly password?: string;
  readonly ssl?: unknown;
}

export interface PgBossGoalQueueOptions {
  readonly connection: PgBossConnection;
  readonly schema: string;
  readonly name: string;
  readonly pollingIntervalSeconds: number;
  readonly notify: boolean;
  readonly poolSize?: number;
}

/** What a job of the goal queue carries: the id of a run stored in the run store. */
interface GoalJobData {
  readonly runId?: unknown;
}

/** Longest a pg-boss job stays `active` (its maximum is 24 h): the run store's lease decides, not this. */
const JOB_EXPIRE_SECONDS = 23 * 3600;
/** Rows per pg-boss insert. */
const INSERT_CHUNK = 500;
/** pg-boss orders a fetch by priority (higher first), then by age: runs taken back from a dead instance go first. */
const RECOVERED_PRIORITY = 1;
/** The newest schema version of pg-boss 10 (its `version` table): pg-boss 12 migrates from 25 (pg-boss 11) on. */
const LAST_PG_BOSS_10_SCHEMA = 24;

/**
 * The cluster-mode GoalQueue, on pg-boss 12: run ids travel through a pg-boss queue on the application's PostgreSQL,
 * so a goal posted on one instance may run on any. The queue has pg-boss's `short` policy and every job's singleton key
 * is its run id: a run waits at most once in the queue however often it is pushed (a recovery sweep on each instance
 * re-pushes queued runs). Jobs are never retried by pg-boss (`retryLimit: 0`): the run store is the source of truth,
 * and a run whose instance died is handed back by the worker's sweep once its lease expired, with a higher priority
 * than new goals (it goes first).
 *
 * Each slot is one pg-boss worker (`work`, one job at a time): pg-boss 12 awaits the handler, then the job's completion,
 * and reports a completion or a fetch that failed (a lost database) as an `error` event, logged here once per outage;
 * a job whose completion failed stays `active` until it expires and is never delivered again (its run is settled in the
 * run store, whatever pg-boss says). A slot that just had a goal asks for the next one at once (`notifyWorker`), not
 * after a polling interval. Idle slots are woken by pg-boss's LISTEN/NOTIFY (`useListenNotify`, the queue's `notify`:
 * every insert notifies, in its own statement, whichever instance made it) and by a push on this instance, and poll
 * every `pollingIntervalSeconds` otherwise. Last, while the queue runs, a process-level net contains unhandled rejections
 * of a lost database from below (see holdUnhandledRejectionNet).
 *
 * pg-boss (an optional peer dependency) is loaded by the constructor: a missing or wrong pg-boss is a boot error
 * (OptionalPeerUnavailableException) of cluster mode only.
 */
export class PgBossGoalQueue implements GoalQueue {
  readonly shared = true;
  private readonly logger = new Logger('PgBossGoalQueue');
  private readonly PgBoss: PgBossClass;
  private boss: PgBoss | null = null;
  /** The pg-boss worker of each slot (their ids, for notifyWorker). */
  private readonly slots: string[] = [];
  private readonly active = new Set<Promise<void>>();
  private accepting = false;
  /** The database is away as pg-boss sees it: logged when it goes and when it comes back, not at every poll. */
  private outageSince: number | null = null;
  private releaseNet?: () => void;

  /** Loads pg-boss: throws OptionalPeerUnavailableException when it is missing, of another version or not loadable. */
  constructor(private readonly options: PgBossGoalQueueOptions) {
    this.PgBoss = loadPgBoss();
  }

  /** The PgBoss instance of pg-boss 12 after start (`queue.instance as PgBoss`), for an app that wants its own queues on it. */
  get instance(): unknown {
    return this.boss;
  }

  async start(handle: (runId: string) => Promise<void>, concurrency: number): Promise<void> {
    const { options } = this;
    const config: ConstructorOptions = {
      ...options.connection,
      schema: options.schema,
      application_name: 'zmodu-agent-worker',
      instanceName: 'zmodu-agent-worker',
      max: options.poolSize ?? concurrency + 2,
      schedule: false, // scheduled agent jobs run on zmodu's own tick claims, not pg-boss cron
      supervise: true,
      migrate: true,
      useListenNotify: options.notify, // one more connection, pg-boss's own (it reconnects it)
    };
    const boss = new this.PgBoss(config);
    boss.on('error', (err: unknown) => this.failed(err));
    boss.on('warning', (warning: { message?: unknown }) => this.logger.warn(`pg-boss: ${errorText(warning)}`));
    this.releaseNet ??= holdUnhandledRejectionNet();
    try {
      await boss.start();
      // The queue's options are set once, by whichever instance creates it (pg-boss 12 creates it under an advisory
      // lock, so instances starting at once no longer deadlock in it); `notify`: every insert wakes the listeners.
      await boss.createQueue(options.name, { policy: 'short', retryLimit: 0, expireInSeconds: JOB_EXPIRE_SECONDS, notify: true });
      this.boss = boss;
      this.accepting = true;
      for (let i = 0; i < concurrency; i++) await this.addSlot(boss, handle);
    } catch (err) {
      const older = await this.olderSchema(boss);
      // Nothing of a start that failed keeps running: pg-boss's pool, supervisor and workers, the rejection net.
      this.boss = null;
      this.accepting = false;
      this.slots.length = 0;
      await boss.stop({ graceful: false, close: true }).catch(() => undefined);
      this.releaseNet?.();
      this.releaseNet = undefined;
      throw older ?? err;
    }
  }

  async push(runIds: readonly string[], pushOptions: PushOptions = {}): Promise<void> {
    const boss = this.boss;
    if (!boss || !runIds.length) return;
    const priority = pushOptions.first ? RECOVERED_PRIORITY : 0;
    for (let i = 0; i < runIds.length; i += INSERT_CHUNK)
      await boss.insert(
        this.options.name,
        runIds.slice(i, i + INSERT_CHUNK).map((runId) => ({
          data: { runId },
          singletonKey: runId,
          priority,
          retryLimit: 0,
          expireInSeconds: JOB_EXPIRE_SECONDS,
        })),
      );
    this.reached();
    // This instance's idle slots at once; the others (and these, again) by the insert's NOTIFY.
    for (const id of this.slots) boss.notifyWorker(id);
  }

  /** Health: a query through pg-boss to its queue (the jobs waiting in it, as pg-boss last counted them); rejects when pg-boss is not started or unreachable. */
  async probe(): Promise<{ queued: number }> {
    const boss = this.boss;
    if (!boss) throw new Error('pg-boss is not started (the worker did not start, or it stopped)');
    const queue = await boss.getQueue(this.options.name);
    if (!queue) throw new Error(`the pg-boss queue ${this.options.name} does not exist (deleted while the worker runs)`);
    return { queued: queue.queuedCount };
  }

  async stop(graceMs: number): Promise<void> {
    this.accepting = false;
    // No slot fetches again; a fetch on the wire now still delivers its goal, which is queued again (see deliver).
    await this.boss
      ?.offWork(this.options.name, { wait: false })
      .catch((err: unknown) => this.logger.warn(`pg-boss did not stop its workers: ${errorText(err)}`));
    await settledWithin(this.active, graceMs);
  }

  async close(): Promise<void> {
    const boss = this.boss;
    this.boss = null;
    this.accepting = false;
    this.slots.length = 0;
    try {
      // Not graceful: the run store holds every run's state; the worker already gave its runs back. pg-boss ends its
      // workers (a handler still running is let go), its maintenance, its LISTEN connection and its pool.
      await boss?.stop({ graceful: false, close: true });
    } finally {
      this.releaseNet?.();
      this.releaseNet = undefined;
    }
  }

  /** One slot: a pg-boss worker taking one job at a time. */
  private async addSlot(boss: PgBoss, handle: (runId: string) => Promise<void>): Promise<void> {
    const slot: { id?: string } = {};
    const polling = this.options.pollingIntervalSeconds;
    slot.id = await boss.work<GoalJobData>(
      this.options.name,
      // With LISTEN/NOTIFY up, pg-boss would poll every 30 s only: the documented fallback stays pollingIntervalSeconds.
      { batchSize: 1, localConcurrency: 1, pollingIntervalSeconds: polling, notifyPollingIntervalSeconds: polling },
      (jobs: Job<GoalJobData>[]) => this.deliver(boss, slot, jobs, handle),
    );
    this.slots.push(slot.id);
  }

  /**
   * A slot's jobs: each run id is handed over (the job completes when this resolves). Never rejects: a handler's error
   * is the worker's to report (it catches its own), and a goal fetched while this instance stops is queued again for
   * another instance.
   */
  private async deliver(boss: PgBoss, slot: { id?: string }, jobs: Job<GoalJobData>[], handle: (runId: string) => Promise<void>) {
    this.reached();
    for (const job of jobs) {
      const runId = job.data?.runId;
      if (typeof runId !== 'string') continue;
      if (this.accepting) await this.run(handle, runId);
      else await this.push([runId]).catch((err: unknown) => this.unreached(`queueing run ${runId} again`, err));
    }
    // The slot asks again at once rather than after a polling interval: the next goal may be waiting already.
    if (this.accepting && slot.id) boss.notifyWorker(slot.id);
  }

  private async run(handle: (runId: string) => Promise<void>, runId: string): Promise<void> {
    const run = handle(runId).catch((err: unknown) => this.logger.error(`The handler of run ${runId} failed: ${safeText(err)}`));
    this.active.add(run);
    try {
      await run;
    } finally {
      this.active.delete(run);
    }
  }

  /**
   * After a failed start: the schema holds pg-boss 10's tables (schema version 24 or older), which pg-boss 12 cannot
   * migrate. The error says what to do; null for any other failure.
   */
  private async olderSchema(boss: PgBoss): Promise<InvalidWorkerOptionsException | null> {
    const version = await boss.schemaVersion().catch(() => null);
    if (typeof version !== 'number' || version > LAST_PG_BOSS_10_SCHEMA) return null;
    return new InvalidWorkerOptionsException(
      'queue.schema',
      `schema ${this.options.schema} holds the tables of pg-boss 10 (schema version ${version}), which pg-boss 12 cannot migrate: ` +
        `set queue.schema to a new schema (the default is zmodu_boss_v12). Nothing is lost: the runs wait in zmodu_agent_runs, ` +
        `and the recovery sweep hands the waiting ones to the new queue. Drop ${this.options.schema} once no instance on an older ` +
        `@zmodu/agent runs`,
    );
  }

  /** pg-boss's `error` event: its workers' fetches and completions, its maintenance, its LISTEN connection. */
  private failed(err: unknown): void {
    if (isDatabaseUnavailable(err)) return this.unreached('its workers or its maintenance', err);
    const text = errorText(err);
    if (text.startsWith('LISTEN/NOTIFY'))
      return void this.logger.warn(
        `pg-boss lost its LISTEN connection (it opens it again; idle slots poll every ${this.options.pollingIntervalSeconds} s meanwhile): ${text}`,
      );
    this.logger.error(`pg-boss: ${text}`);
  }

  private unreached(what: string, err: unknown): void {
    if (!isDatabaseUnavailable(err)) {
      this.logger.error(`pg-boss failed ${what}: ${errorText(err)}`);
      return;
    }
    if (this.outageSince !== null) return;
    this.outageSince = Date.now();
    this.logger.warn(`pg-boss cannot reach the database (${what}); the slots poll until it is back: ${errorText(err)}`);
  }

  /** pg-boss answered (a goal delivered, a push stored): the end of an outage, if one was logged. */
  private reached(): void {
    if (this.outageSince === null) return;
    this.logger.log(`pg-boss reaches the database again (after ${Date.now() - this.outageSince} ms)`);
    this.outageSince = null;
  }
}

/** The text of what pg-boss reports: an Error, or the plain object its workers make of one (`{ ...err, message }`). */
function errorText(reported: unknown): string {
  const message = (reported as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : safeText(reported);
}
