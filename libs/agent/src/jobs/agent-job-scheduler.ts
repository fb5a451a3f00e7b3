import { Logger } from '@nestjs/common';
import type { CronJob } from 'cron';
import { InvalidGoalException } from '../exceptions/invalid-goal.exception';
import type { PostGoalOptions } from '../worker/agent-worker';
import { AgentJobRecord, AgentJobStore } from './agent-job.ports';
import { latestTickAtOrBefore, latestTickBetween, nextTick } from './agent-job-cron';
import { loadCronPackage } from './cron-package';
import type { CronJobRegistry } from './schedule-package';

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

/** Unposted ticks one sync claims again at most. */
const RECLAIM_LIMIT = 100;
/** Default interval of the sync that picks up jobs created or cancelled on another instance. */
export const DEFAULT_JOB_SYNC_MS = 30_000;

/** The prefix of an armed job's name in `@nestjs/schedule`'s SchedulerRegistry: `zmodu:job:<job id>`. */
export const AGENT_JOB_CRON_PREFIX = 'zmodu:job:';

/**
 * The name under which a job armed on this instance is in `@nestjs/schedule`'s SchedulerRegistry:
 * `zmodu:job:static:<name>` for an @AgentJob, `zmodu:job:<id>` for a job `schedule_job` created.
 */
export function agentJobCronName(jobId: string): string {
  return `${AGENT_JOB_CRON_PREFIX}${jobId}`;
}

/** The timer of one armed job: a `cron` CronJob that remembers when start() resumed it after a stop(). */
type AgentJobCron = CronJob<null, null> & { resumedAt: number };

let agentJobCronClass: (new (cron: string, onTick: () => void, timeZone: string) => AgentJobCron) | null = null;

/**
 * The class of an armed job's timer, a `cron` CronJob (the one the SchedulerRegistry lists), made once the optional
 * `cron` package is loaded. `stop()` on it (through the registry) pauses the job on this instance: no tick is claimed
 * here from then on, and no missed tick is caught up for the time it was stopped; `start()` resumes it at its next tick.
 */
function AgentJobCronClass(): new (cron: string, onTick: () => void, timeZone: string) => AgentJobCron {
  if (agentJobCronClass) return agentJobCronClass;
  const { CronJob: Base } = loadCronPackage();
  class Timer extends Base<null, null> {
    /** When start() resumed it after a stop() (ms since the epoch), or 0. */
    resumedAt = 0;
    private stoppedByCall = false;

    constructor(cron: string, onTick: () => void, timeZone: string) {
      // Not started here; unref'd: an armed job does not keep the process alive.
      super(cron, onTick, null, false, timeZone, null, false, null, true);
    }

    override start(): void {
      if (this.stoppedByCall) {
        this.stoppedByCall = false;
        this.resumedAt = Date.now();
      }
      super.start();
    }

    override stop(): Promise<void> | undefined {
      this.stoppedByCall = true;
      return super.stop();
    }
  }
  agentJobCronClass = Timer;
  return Timer;
}

interface Armed {
  /** The job's definition when armed: a change re-arms it. */
  key: string;
  job: AgentJobRecord;
  cron: AgentJobCron;
  /** Whether `cron` was added to the registry under agentJobCronName(job.id). */
  registered: boolean;
}

/**
 * Runs the jobs of an AgentJobStore on this instance. Every tick is claimed in the store first (one INSERT on
 * (job, tick)), so when several instances share a database each tick posts its goal once. At start, a job whose
 * ticks were missed (no instance was running) follows its policy: `skip`, or `catch_up` = one run for the latest
 * missed tick. Every `syncMs` the store is read again: jobs created or cancelled on another instance are picked up.
 *
 * Each armed job's timer is a `cron` CronJob; given `registry` (`@nestjs/schedule`'s SchedulerRegistry), it is added
 * there as `zmodu:job:<job id>` (agentJobCronName), where the application can list it, stop it and start it again.
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
    private readonly registry: CronJobRegistry | null = null,
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
    for (const id of this.armed.keys()) if (!ids.has(id)) this.disarm(id);
    for (const id of this.expired) if (!ids.has(id)) this.expired.delete(id);
    for (const job of jobs) if (this.armed.get(job.id)?.key !== keyOf(job)) this.arm(job);
    await this.catchUp(jobs, new Date());
    await this.postUnposted();
  }

  /**
   * `catch_up` jobs whose latest due tick was never claimed (its timer fired while the database was away, so the claim
   * failed): claim and post it now, once (the claim is the store's conditional write), rather than at the next start.
   * A `skip` job's tick missed that way stays missed, as a tick missed while no instance ran. A job stopped through the
   * registry catches up nothing, and once started again, no tick of the time it was stopped.
   */
  private async catchUp(jobs: AgentJobRecord[], now: Date): Promise<void> {
    for (const job of jobs) {
      if (job.missed !== 'catch_up' || this.stopped) continue;
      const cron = this.armed.get(job.id)?.cron;
      if (cron && !cron.isActive) continue;
      const from = Math.max((job.lastTickAt ?? job.createdAt).getTime(), cron?.resumedAt ?? 0);
      const tick = latestTickBetween(job.cron, job.timeZone, new Date(from), now);
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
    for (const id of [...this.armed.keys()]) this.disarm(id);
  }

  /** The ids of the jobs armed on this instance (a job stopped through the registry included). */
  jobIds(): string[] {
    return [...this.armed.keys()];
  }

  /** The ids of the jobs this instance found expired (reported in the log, not armed), until the store stops listing them. */
  expiredJobIds(): string[] {
    return [...this.expired];
  }

  private arm(job: AgentJobRecord): void {
    const old = this.armed.get(job.id);
    if (this.stopped) return void this.disarm(job.id);
    if (this.expiresBeforeNextTick(job, new Date())) return void this.disarm(job.id);
    if (old && old.job.cron === job.cron && old.job.timeZone === job.timeZone) {
      // Same schedule: the same timer (a stop through the registry holds), with the new definition.
      old.key = keyOf(job);
      old.job = job;
      return;
    }
    // A new schedule: a new timer, stopped if the old one was stopped through the registry.
    const paused = old ? !old.cron.isActive : false;
    if (old) this.disarm(job.id);
    const entry: Armed = {
      key: keyOf(job),
      job,
      cron: new (AgentJobCronClass())(job.cron, () => this.onTick(entry), job.timeZone),
      registered: false,
    };
    entry.cron.errorHandler = (e: unknown) => this.logger.error(`job ${job.id} tick failed: ${(e as Error)?.message ?? String(e)}`);
    this.armed.set(job.id, entry);
    if (paused) void entry.cron.stop();
    else entry.cron.start();
    this.register(entry);
  }

  /** Add the job's timer to the SchedulerRegistry (when there is one) under agentJobCronName(job.id). */
  private register(entry: Armed): void {
    if (!this.registry) return;
    const name = agentJobCronName(entry.job.id);
    try {
      if (this.registry.doesExist('cron', name)) {
        this.logger.error(
          `the SchedulerRegistry already has a cron job named ${name}: job ${entry.job.id} runs, but is not listed there (rename your cron job: zmodu:job:* names are the agent jobs')`,
        );
        return;
      }
      this.registry.addCronJob(name, entry.cron);
      entry.registered = true;
    } catch (e) {
      this.logger.error(`job ${entry.job.id} could not be added to the SchedulerRegistry: ${(e as Error).message}`);
    }
  }

  /** Stop a job's timer here and take it out of the registry (if it is still ours there). */
  private disarm(id: string): void {
    const entry = this.armed.get(id);
    if (!entry) return;
    this.armed.delete(id);
    void entry.cron.stop();
    if (!entry.registered || !this.registry) return;
    const name = agentJobCronName(id);
    try {
      // The application may have deleted it (deleteCronJob) or put its own there since.
      if (this.registry.doesExist('cron', name) && this.registry.getCronJob(name) === entry.cron) this.registry.deleteCronJob(name);
    } catch (e) {
      this.logger.error(`job ${id} could not be taken out of the SchedulerRegistry: ${(e as Error).message}`);
    }
  }

  /** Its next tick is at or past its expiry: it fires no more here (the store refuses such a tick on every instance). */
  private expiresBeforeNextTick(job: AgentJobRecord, now: Date): boolean {
    if (!job.expiresAt || nextTick(job.cron, job.timeZone, now).getTime() < job.expiresAt.getTime()) return false;
    if (!this.expired.has(job.id))
      this.logger.log(
        `job ${job.id} of tenant ${JSON.stringify(job.tenantId)} expires at ${job.expiresAt.toISOString()}, before its next tick: it fires no more`,
      );
    this.expired.add(job.id);
    return true;
  }

  /**
   * The job's timer fired (or the application called its `fireOnTick()`): claim and post the latest tick at or
   * before now, the one it fired for (a tick another instance, or an earlier call, already claimed posts nothing).
   */
  private async onTick(entry: Armed): Promise<void> {
    const now = new Date();
    const job = entry.job;
    const tick = latestTickAtOrBefore(job.cron, job.timeZone, now);
    if (tick) await this.fire(job, tick);
    if (this.armed.get(job.id) === entry && this.expiresBeforeNextTick(job, new Date())) this.disarm(job.id);
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
