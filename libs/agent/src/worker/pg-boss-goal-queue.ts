import { Logger } from '@nestjs/common';
import { Client, ClientConfig } from 'pg';
import PgBoss from 'pg-boss';
import { safeText } from '../error-text';
import { GoalQueue, settledWithin } from './worker.ports';

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
/** Wait before opening a lost LISTEN connection again (doubled after each failed attempt, up to the maximum). */
const LISTEN_RETRY_MS = 1000;
const LISTEN_RETRY_MAX_MS = 30_000;
/** Rows per pg-boss insert. */
const INSERT_CHUNK = 500;

/**
 * The cluster-mode GoalQueue: run ids travel through a pg-boss queue on the application's PostgreSQL, so a goal
 * posted on one instance may run on any. The queue has pg-boss's `short` policy and every job's singleton key is its
 * run id: a run waits at most once in the queue however often it is pushed (a recovery sweep on each instance
 * re-pushes queued runs). Jobs are never retried by pg-boss (`retryLimit: 0`): the run store is the source of truth,
 * and a run whose instance died is handed back by the worker's sweep once its lease expired. Idle slots are woken
 * by a PostgreSQL NOTIFY on every push (any instance), and poll every `pollingIntervalSeconds` otherwise.
 */
export class PgBossGoalQueue implements GoalQueue {
  readonly shared = true;
  private readonly logger = new Logger('PgBossGoalQueue');
  private boss: PgBoss | null = null;
  private listener: Client | null = null;
  private readonly workerIds: string[] = [];
  private readonly active = new Set<Promise<void>>();
  private accepting = false;
  private relisten?: NodeJS.Timeout;
  private listenFailures = 0;

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
    boss.on('error', (err: unknown) => this.logger.error(`pg-boss: ${safeText(err)}`));
    await boss.start();
    this.boss = boss;
    await boss.createQueue(options.name, {
      name: options.name,
      policy: 'short',
      retryLimit: 0,
      expireInSeconds: JOB_EXPIRE_SECONDS,
    });
    this.accepting = true;
    for (let i = 0; i < concurrency; i++) {
      let workerId = '';
      workerId = await boss.work<{ runId?: unknown }>(
        options.name,
        { batchSize: 1, pollingIntervalSeconds: options.pollingIntervalSeconds },
        async (jobs) => {
          for (const job of jobs) {
            const runId = job.data?.runId;
            if (typeof runId !== 'string') continue;
            if (!this.accepting) {
              // Fetched while this instance stops: this job completes, so queue the run again for another instance.
              await this.push([runId]).catch((err: unknown) =>
                this.logger.warn(`Run ${runId} waits for a recovery sweep (could not queue it again): ${safeText(err)}`),
              );
              continue;
            }
            const run = handle(runId).catch(() => undefined);
            this.active.add(run);
            try {
              await run;
            } finally {
              this.active.delete(run);
            }
          }
          // A slot that just had a goal asks again at once (pg-boss would otherwise wait a polling interval);
          // an empty fetch does not get here, so an idle slot polls at the interval.
          if (this.accepting) boss.notifyWorker(workerId);
        },
      );
      this.workerIds.push(workerId);
    }
    if (options.notify) await this.listen();
  }

  async push(runIds: readonly string[]): Promise<void> {
    const boss = this.boss;
    if (!boss || !runIds.length) return;
    for (let i = 0; i < runIds.length; i += INSERT_CHUNK)
      await boss.insert(
        runIds.slice(i, i + INSERT_CHUNK).map((runId) => ({
          name: this.options.name,
          data: { runId },
          singletonKey: runId,
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
    return { queued: await boss.getQueueSize(this.options.name) };
  }

  async stop(graceMs: number): Promise<void> {
    if (this.accepting && this.boss) {
      this.accepting = false;
      await this.boss.offWork(this.options.name);
    }
    await settledWithin(this.active, graceMs);
  }

  async close(): Promise<void> {
    const { boss, listener } = this;
    this.boss = null;
    this.listener = null;
    this.accepting = false;
    clearTimeout(this.relisten);
    this.relisten = undefined;
    await listener?.end().catch(() => undefined);
    // Not graceful: the run store holds every run's state; the worker already gave its runs back.
    await boss?.stop({ graceful: false, close: true, wait: true });
  }

  private get channel(): string {
    return `${this.options.name}_posted`;
  }

  /** Wake this instance's idle slots (a slot busy with a run looks again as soon as it is done). */
  private wake(): void {
    if (!this.accepting || !this.boss) return;
    for (const id of this.workerIds) this.boss.notifyWorker(id);
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
