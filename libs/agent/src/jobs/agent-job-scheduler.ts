import { Logger } from '@nestjs/common';
import { InvalidGoalException } from '../exceptions/invalid-goal.exception';
import type { PostGoalOptions } from '../worker/agent-worker';
import { AgentJobRecord, AgentJobStore } from './agent-job.ports';
import { latestTickBetween, nextTick } from './agent-job-cron';

/**
 * The run id recorded for a tick whose goal the worker refused for good (InvalidGoalException: an agent removed since,
 * a tenant or user id it does not take, a goal too long): a sync does not post it again (it would be refused again,
 * every sync, for a day, ahead of other jobs' ticks).
 */
export const REFUSED_TICK_RUN_ID = 'refused';

/** Who runs a tick's goal: the AgentWorker (its `post`). */
export interface AgentJobPoster {
  post(goal: string, scope: PostGoalOptions): Promise<{ runId: string }>;
}

/** setTimeout's limit (about 24.8 days): a later tick is re-armed when this one fires. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/** Unposted ticks one sync claims again at most. */
const RECLAIM_LIMIT = 100;
/** Default interval of the sync that picks up jobs created or cancelled on another instance. */
export const DEFAULT_JOB_SYNC_MS = 30_000;

interface Armed {
  readonly key: string;
  timer: NodeJS.Timeout;
}

/**
 * Runs the jobs of an AgentJobStore on this instance. Every tick is claimed in the store first (one INSERT on
 * (job, tick)), so when several instances share a database each tick posts its goal once. At start, a job whose
 * ticks were missed (no instance was running) follows its policy: `skip`, or `catch_up` = one run for the latest
 * missed tick. Every `syncMs` the store is read again: jobs created or cancelled on another instance are picked up.
 */
export class AgentJobScheduler {
  private readonly logger = new Logger('AgentJobScheduler');
  private readonly armed = new Map<string, Armed>();
  /** Jobs whose expiry this instance reported (once each): they are not armed again. */
  private readonly expired = new Set<string>();
  private syncTimer: NodeJS.Timeout | null = null;
  private stopped = true;

  constructor(
    private readonly store: AgentJobStore,
    private readonly poster: AgentJobPoster,
    private readonly syncMs: number = DEFAULT_JOB_SYNC_MS,
  ) {}

  /** Load the jobs, run missed ticks per policy, arm the timers and the periodic sync. */
  async start(): Promise<void> {
    this.stopped = false;
    const now = new Date();
    for (const job of await this.store.active()) {
      if (job.missed === 'catch_up') {
        const tick = latestTickBetween(job.cron, job.timeZone, job.lastTickAt ?? job.createdAt, now);
        if (tick) await this.fire(job, tick);
      }
      this.arm(job);
    }
    await this.postUnposted();
    this.syncTimer = setInterval(
      () => void this.sync().catch((e: Error) => this.logger.error(`job sync failed: ${e.message}`)),
      this.syncMs,
    );
    this.syncTimer.unref?.();
  }

  /** Read the store again: arm new or changed jobs, disarm cancelled ones. */
  async sync(): Promise<void> {
    if (this.stopped) return;
    const jobs = await this.store.active();
    const ids = new Set(jobs.map((j) => j.id));
    for (const [id, a] of this.armed) {
      if (!ids.has(id)) {
        clearTimeout(a.timer);
        this.armed.delete(id);
      }
    }
    for (const id of this.expired) if (!ids.has(id)) this.expired.delete(id);
    for (const job of jobs) if (this.armed.get(job.id)?.key !== keyOf(job)) this.arm(job);
    await this.catchUp(jobs, new Date());
    await this.postUnposted();
  }

  /**
   * `catch_up` jobs whose latest due tick was never claimed (its timer fired while the database was away, so the claim
   * failed): claim and post it now, once (the claim is the store's conditional write), rather than at the next start.
   * A `skip` job's tick missed that way stays missed, as a tick missed while no instance ran.
   */
  private async catchUp(jobs: AgentJobRecord[], now: Date): Promise<void> {
    for (const job of jobs) {
      if (job.missed !== 'catch_up' || this.stopped) continue;
      const tick = latestTickBetween(job.cron, job.timeZone, job.lastTickAt ?? job.createdAt, now);
      if (tick) await this.fire(job, tick);
    }
  }

  /** Ticks claimed by an instance that died before posting (or whose post was refused): post them now, once. */
  private async postUnposted(): Promise<void> {
    for (const { job, tick } of await this.store.reclaimUnposted(this.syncMs, RECLAIM_LIMIT)) await this.post(job, tick);
  }

  stop(): void {
    this.stopped = true;
    if (this.syncTimer) clearInterval(this.syncTimer);
    this.syncTimer = null;
    for (const a of this.armed.values()) clearTimeout(a.timer);
    this.armed.clear();
  }

  /** The ids of the jobs armed on this instance. */
  jobIds(): string[] {
    return [...this.armed.keys()];
  }

  /** The ids of the jobs this instance found expired (reported in the log, not armed), until the store stops listing them. */
  expiredJobIds(): string[] {
    return [...this.expired];
  }

  private arm(job: AgentJobRecord): void {
    const old = this.armed.get(job.id);
    if (old) clearTimeout(old.timer);
    this.armed.delete(job.id);
    if (this.stopped) return;
    const tick = nextTick(job.cron, job.timeZone, new Date());
    if (job.expiresAt && tick.getTime() >= job.expiresAt.getTime()) {
      // Its next tick is at or past its expiry: it fires no more here (the store refuses such a tick on every instance).
      if (!this.expired.has(job.id))
        this.logger.log(
          `job ${job.id} of tenant ${JSON.stringify(job.tenantId)} expires at ${job.expiresAt.toISOString()}, before its next tick: it fires no more`,
        );
      this.expired.add(job.id);
      return;
    }
    const delay = Math.min(Math.max(tick.getTime() - Date.now(), 0), MAX_TIMEOUT_MS);
    const timer = setTimeout(() => {
      const due = tick.getTime() <= Date.now();
      void (due ? this.fire(job, tick) : Promise.resolve()).finally(() => {
        if (this.armed.get(job.id)?.timer === timer) this.arm(job);
      });
    }, delay);
    timer.unref?.();
    this.armed.set(job.id, { key: keyOf(job), timer });
  }

  /** Claim (job, tick); the winner posts the goal with the job's scope. Errors are logged, never thrown. */
  async fire(job: AgentJobRecord, tick: Date): Promise<boolean> {
    try {
      if (!(await this.store.claimTick(job.id, tick))) return false;
    } catch (e) {
      this.logger.error(`job ${job.id} tick ${tick.toISOString()} could not be claimed: ${(e as Error).message}`);
      return false;
    }
    return this.post(job, tick);
  }

  /**
   * Post a claimed tick's goal with the job's scope and record its run. Errors are logged, never thrown: a sync retries
   * the post, unless the worker refused the goal for good (recorded as REFUSED_TICK_RUN_ID).
   */
  private async post(job: AgentJobRecord, tick: Date): Promise<boolean> {
    try {
      const { runId } = await this.poster.post(job.goal, {
        ...(job.agent ? { agent: job.agent } : {}),
        tenantId: job.tenantId,
        userId: job.userId,
        permissions: job.permissions,
        jobId: job.id,
        jobTick: tick.toISOString(),
      });
      await this.store.setTickRun(job.id, tick, runId);
      return true;
    } catch (e) {
      const refused = e instanceof InvalidGoalException;
      this.logger.error(
        `job ${job.id} tick ${tick.toISOString()} could not post its goal: ${(e as Error).message}` +
          (refused ? ' (refused by the worker: this tick is not posted again)' : ''),
      );
      if (refused)
        await this.store.setTickRun(job.id, tick, REFUSED_TICK_RUN_ID).catch((err: Error) => {
          this.logger.error(`job ${job.id} tick ${tick.toISOString()} could not be recorded as refused: ${err.message}`);
        });
      return false;
    }
  }
}

const keyOf = (j: AgentJobRecord) =>
  JSON.stringify([j.cron, j.timeZone, j.goal, j.agent, j.tenantId, j.userId, j.permissions, j.expiresAt?.getTime() ?? null]);
