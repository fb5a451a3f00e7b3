import { Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '@zmodu/db';
import { sqlState } from '@zmodu/guard';
import { Client, ClientConfig } from 'pg';
import PgBoss from 'pg-boss';
import { safeText } from '../error-text';
import { holdUnhandledRejectionNet } from './unhandled-rejection-net';
import { GoalQueue, PushOptions, settledWithin } from './worker.ports';

/** Where pg-boss connects: a URL, or the fields of the app's DataSource. */
export type PgBossConnection = Pick<
  PgBoss.DatabaseOptions,
  'connectionString' | 'host' | 'port' | 'database' | 'user' | 'password' | 'ssl'
>;

export interface PgBossGoalQueueOptions {
  readonly connection: PgBossConnection;
  readonly schema: string;
  readonly name: string;
  readonly pollingIntervalSeconds: number;
  readonly notify: boolean;
  readonly poolSize?: number;
}

/** Longest a pg-boss job stays `active` (its maximum is under 24 h): the run store's lease decides, not this. */
const JOB_EXPIRE_SECONDS = 23 * 3600;
/** Tries of the queue's creation when instances starting at once deadlock in it (40P01). */
const CREATE_QUEUE_ATTEMPTS = 5;
/** Wait before opening a lost LISTEN connection again (doubled after each failed attempt, up to the maximum). */
const LISTEN_RETRY_MS = 1000;
const LISTEN_RETRY_MAX_MS = 30_000;
/** Rows per pg-boss insert. */
const INSERT_CHUNK = 500;
/** pg-boss orders a fetch by priority (higher first), then by age: runs taken back from a dead instance go first. */
const RECOVERED_PRIORITY = 1;

/**
 * The pg-boss calls whose form is version-specific, in one place (written for pg-boss 10): an upgrade of pg-boss is
 * checked here and at the other calls (`fetch`, `complete`, `getDb().executeSql`, the 'error' event, `start`, `stop`),
 * each awaited and caught. Nothing else of pg-boss is used: no `work` (see the slots below).
 */
const boss10 = {
  insert: (boss: PgBoss, name: string, jobs: Omit<PgBoss.JobInsert, 'name'>[]) => boss.insert(jobs.map((job) => ({ ...job, name }))),
  createQueue: (boss: PgBoss, name: string, options: Omit<PgBoss.Queue, 'name'>) => boss.createQueue(name, { ...options, name }),
  queued: (boss: PgBoss, name: string) => boss.getQueueSize(name),
};

/**
 * The cluster-mode GoalQueue: run ids travel through a pg-boss queue on the application's PostgreSQL, so a goal
 * posted on one instance may run on any. The queue has pg-boss's `short` policy and every job's singleton key is its
 * run id: a run waits at most once in the queue however often it is pushed (a recovery sweep on each instance
 * re-pushes queued runs). Jobs are never retried by pg-boss (`retryLimit: 0`): the run store is the source of truth,
 * and a run whose instance died is handed back by the worker's sweep once its lease expired, with a higher priority
 * than new goals (it goes first). Idle slots are woken by a PostgreSQL NOTIFY on every push (any instance), and poll
 * every `pollingIntervalSeconds` otherwise.
 *
 * A restart of the database never ends the process. Each slot is a loop of our own (`fetch`, the handler, `complete`),
 * every call awaited and caught: pg-boss's `work` loop calls `complete`/`fail` without awaiting them, so a completion
 * that met a terminated connection (57P01) was an unhandled rejection and Node exited. A fetch or completion that fails
 * is logged once per outage; the slot waits a polling interval and goes on. A job whose completion failed stays
 * `active` in pg-boss (it expires): its run is settled in the run store, whatever pg-boss says. pg-boss's own 'error'
 * events (its pool, its maintenance) are logged. Last, while the queue runs, a process-level net contains unhandled
 * rejections of a lost database from below (see holdUnhandledRejectionNet).
 */
export class PgBossGoalQueue implements GoalQueue {
  readonly shared = true;
  private readonly logger = new Logger('PgBossGoalQueue');
  private boss: PgBoss | null = null;
  private listener: Client | null = null;
  private readonly slots = new Set<Promise<void>>();
  private readonly active = new Set<Promise<void>>();
  private accepting = false;
  private relisten?: NodeJS.Timeout;
  private listenFailures = 0;
  /** The idle slots' wake-ups (a push here, a NOTIFY from another instance, the stop). */
  private readonly idle = new Set<() => void>();
  /** The database is away as seen by the slots: logged when it goes and when it comes back, not at every poll. */
  private outageSince: number | null = null;
  private releaseNet?: () => void;

  constructor(private readonly options: PgBossGoalQueueOptions) {}

  /** The pg-boss instance (after start), for an application that also wants its own queues on it. */
  get instance(): PgBoss | null {
    return this.boss;
  }

  async start(handle: (runId: string) => Promise<void>, concurrency: number): Promise<void> {
    const { options } = this;
    const boss = new PgBoss({
      ...options.connection,
      schema: options.schema,
      application_name: 'zmodu-agent-worker',
      max: options.poolSize ?? concurrency + 2,
      schedule: false, // scheduled agent jobs run on zmodu's own tick claims, not pg-boss cron
      supervise: true,
      migrate: true,
    });
    boss.on('error', (err: unknown) => {
      if (isDatabaseUnavailable(err)) this.logger.warn(`pg-boss lost the database (it goes on once it is back): ${safeText(err)}`);
      else this.logger.error(`pg-boss: ${safeText(err)}`);
    });
    this.releaseNet ??= holdUnhandledRejectionNet();
    try {
      await boss.start();
      // Instances starting at once can deadlock in pg-boss's queue creation (40P01, its catalog rows): one of them is
      // chosen as the victim and tries again; the queue exists once any of them succeeded.
      for (let attempt = 1; ; attempt++)
        try {
          await boss10.createQueue(boss, options.name, { policy: 'short', retryLimit: 0, expireInSeconds: JOB_EXPIRE_SECONDS });
          break;
        } catch (err) {
          if (sqlState(err) !== '40P01' || attempt >= CREATE_QUEUE_ATTEMPTS) throw err;
          await new Promise((r) => setTimeout(r, 50 * attempt + Math.floor(Math.random() * 50)));
        }
    } catch (err) {
      // Nothing of a start that failed keeps running: pg-boss's pool and supervisor, the rejection net.
      await boss.stop({ graceful: false, close: true, wait: true }).catch(() => undefined);
      this.releaseNet?.();
      this.releaseNet = undefined;
      throw err;
    }
    this.boss = boss;
    this.accepting = true;
    for (let i = 0; i < concurrency; i++) {
      const slot = this.slot(boss, handle);
      this.slots.add(slot);
      void slot.finally(() => this.slots.delete(slot));
    }
    if (options.notify) await this.listen();
  }

  async push(runIds: readonly string[], pushOptions: PushOptions = {}): Promise<void> {
    const boss = this.boss;
    if (!boss || !runIds.length) return;
    const priority = pushOptions.first ? RECOVERED_PRIORITY : 0;
    for (let i = 0; i < runIds.length; i += INSERT_CHUNK)
      await boss10.insert(
        boss,
        this.options.name,
        runIds.slice(i, i + INSERT_CHUNK).map((runId) => ({
          data: { runId },
          singletonKey: runId,
          priority,
          retryLimit: 0,
          expireInSeconds: JOB_EXPIRE_SECONDS,
        })),
      );
    this.wake();
    if (this.options.notify)
      await boss
        .getDb()
        .executeSql('SELECT pg_notify($1, $2)', [this.channel, String(runIds.length)])
        .catch((err: unknown) => this.logger.warn(`NOTIFY failed (other instances poll instead): ${safeText(err)}`));
  }

  /** Health: a query through pg-boss to its queue (the jobs waiting in it); rejects when pg-boss is not started or unreachable. */
  async probe(): Promise<{ queued: number }> {
    const boss = this.boss;
    if (!boss) throw new Error('pg-boss is not started (the worker did not start, or it stopped)');
    return { queued: await boss10.queued(boss, this.options.name) };
  }

  async stop(graceMs: number): Promise<void> {
    this.accepting = false;
    this.wake(); // idle slots see the stop at once
    await settledWithin(this.active, graceMs);
  }

  async close(): Promise<void> {
    const { boss, listener } = this;
    this.boss = null;
    this.listener = null;
    this.accepting = false;
    this.wake();
    clearTimeout(this.relisten);
    this.relisten = undefined;
    await listener?.end().catch(() => undefined);
    // The slots have no handler running now (the worker stopped them): each ends at its next look at `accepting`.
    await settledWithin(this.slots, 1000);
    try {
      // Not graceful: the run store holds every run's state; the worker already gave its runs back.
      await boss?.stop({ graceful: false, close: true, wait: true });
    } finally {
      this.releaseNet?.();
      this.releaseNet = undefined;
    }
  }

  /**
   * One slot: fetch one job, hand its run id over, complete the job, again. Nothing here rejects: a handler's error is
   * the worker's to report (it catches its own), and pg-boss calls that fail (a lost database) are caught, logged once
   * per outage, and followed by a polling interval's wait.
   */
  private async slot(boss: PgBoss, handle: (runId: string) => Promise<void>): Promise<void> {
    const { name } = this.options;
    while (this.accepting) {
      let jobs: PgBoss.Job<{ runId?: unknown }>[];
      try {
        jobs = (await boss.fetch<{ runId?: unknown }>(name, { batchSize: 1 })) ?? [];
        this.reached();
      } catch (err) {
        this.unreached('fetching goals', err);
        await this.pause();
        continue;
      }
      if (!jobs.length) {
        await this.pause();
        continue;
      }
      for (const job of jobs) {
        const runId = job.data?.runId;
        if (typeof runId === 'string') {
          if (this.accepting) await this.run(handle, runId);
          // Fetched while this instance stops: queue the run again for another instance (the job completes below).
          else await this.push([runId]).catch((err: unknown) => this.unreached(`queueing run ${runId} again`, err));
        }
        try {
          await boss.complete(name, job.id);
        } catch (err) {
          // The run is settled in the run store; the job stays `active` until it expires, and is never delivered again.
          this.unreached('completing a delivered goal', err);
        }
      }
      // A slot that just had a goal asks again at once; an empty fetch waited a polling interval above.
    }
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

  /** A polling interval, or less when woken (a push, a NOTIFY, the stop). */
  private pause(): Promise<void> {
    if (!this.accepting) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.idle.delete(done);
        resolve();
      };
      // Not unref'd: like pg-boss's own polling, an idle slot keeps a worker-only process alive.
      const timer = setTimeout(done, this.options.pollingIntervalSeconds * 1000);
      this.idle.add(done);
    });
  }

  private unreached(what: string, err: unknown): void {
    if (!isDatabaseUnavailable(err)) {
      this.logger.error(`pg-boss failed ${what}: ${safeText(err)}`);
      return;
    }
    if (this.outageSince !== null) return;
    this.outageSince = Date.now();
    this.logger.warn(`pg-boss cannot reach the database (${what}); the slots poll until it is back: ${safeText(err)}`);
  }

  private reached(): void {
    if (this.outageSince === null) return;
    this.logger.log(`pg-boss reaches the database again (after ${Date.now() - this.outageSince} ms)`);
    this.outageSince = null;
  }

  private get channel(): string {
    return `${this.options.name}_posted`;
  }

  /** Wake this instance's idle slots (a slot busy with a run looks again as soon as it is done). */
  private wake(): void {
    for (const done of [...this.idle]) done();
  }

  /** LISTEN for other instances' pushes; a lost connection is opened again (meanwhile the slots poll). */
  private async listen(): Promise<void> {
    const client = new Client(this.options.connection as ClientConfig);
    client.on('error', (err) => {
      this.logger.warn(`LISTEN connection lost (slots poll every ${this.options.pollingIntervalSeconds} s): ${safeText(err)}`);
      this.listenAgain(client);
    });
    client.on('end', () => this.listenAgain(client));
    client.on('notification', () => this.wake());
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      this.logger.warn(`LISTEN failed (slots poll every ${this.options.pollingIntervalSeconds} s): ${safeText(err)}`);
      await client.end().catch(() => undefined);
      this.listenFailures++;
      return this.listenAgain(null);
    }
    if (!this.accepting) return void (await client.end().catch(() => undefined)); // stopped meanwhile
    this.listener = client;
    this.listenFailures = 0;
    this.wake(); // goals posted while no connection listened
  }

  /** After the LISTEN connection `lost` ended (null: it never opened), open another unless the queue stopped. */
  private listenAgain(lost: Client | null): void {
    if (lost && this.listener !== lost) return; // already replaced, or closing
    this.listener = null;
    if (!this.accepting || this.relisten) return;
    this.relisten = setTimeout(
      () => {
        this.relisten = undefined;
        if (this.accepting && !this.listener) void this.listen();
      },
      Math.min(LISTEN_RETRY_MS * 2 ** this.listenFailures, LISTEN_RETRY_MAX_MS),
    );
    this.relisten.unref?.();
  }
}
