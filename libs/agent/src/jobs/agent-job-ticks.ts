import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { JOBS_NEED_WORKER_MESSAGE } from '../agent.messages';
import { InvalidJobsOptionsException } from '../exceptions/invalid-jobs-options.exception';
import { InvalidGoalException } from '../exceptions/invalid-goal.exception';
import { AgentWorker, PostGoalOptions } from '../worker/agent-worker';
import { AgentJobStore, cronTickJobId } from './agent-job.ports';
import { cronProblem, latestTickAtOrBefore } from './agent-job-cron';
import { REFUSED_TICK_RUN_ID } from './agent-job-scheduler';
import { AGENT_JOB_STORE } from './agent-job-store.provider';

/** The goal AgentJobTicks posts for a tick, and the scope it runs with (as AgentWorker.post takes them). */
export interface AgentTickGoal {
  readonly goal: string;
  /** Optional when the application defines exactly one agent. */
  readonly agent?: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

/** What one caller of a tick got: `posted` on the one caller (across every instance on the store) that won it. */
export interface AgentTickOutcome {
  readonly name: string;
  readonly tick: Date;
  readonly posted: boolean;
  /** The run the goal started (null for every caller but the winner). */
  readonly runId: string | null;
}

/** The scope of a tick's run, without its goal. */
export type AgentTickScope = Omit<AgentTickGoal, 'goal'>;

/** Longest tick name: its claim key `cron:<name>` is the run's jobId, which the worker takes up to 200 characters. */
const MAX_NAME = 150;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `name` cannot name a @Cron's ticks, or null. */
export function cronTickNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || !name.trim()) return 'name is required: the name of the @Cron whose tick this is, e.g. "hourly-report"';
  if (name.length > MAX_NAME || CONTROL.test(name) || name.trim() !== name)
    return `name "${name.slice(0, 40)}" must have 1 to ${MAX_NAME} characters, no control characters and no surrounding spaces`;
  return null;
}

const isDate = (v: unknown): v is Date => Object.prototype.toString.call(v) === '[object Date]' && Number.isFinite((v as Date).getTime());

/**
 * Once-per-tick goals from the application's own `@Cron` methods. `@Cron` of @nestjs/schedule fires on every instance;
 * `postOnce(name, tick, goal)` claims (`cron:<name>`, tick) in the job store's tick table (one conditional INSERT, the
 * claim the jobs use) and posts the goal only on the caller that won: one goal per tick across the cluster, however
 * many instances fire. Provided by AgentJobsModule (the store), which needs AgentWorkerModule.
 */
@Injectable()
export class AgentJobTicks {
  private readonly logger = new Logger('AgentJobTicks');

  constructor(
    @Inject(AGENT_JOB_STORE) private readonly store: AgentJobStore,
    @Optional() private readonly worker: AgentWorker,
  ) {
    // The ticks' goals go to the AgentWorker: without AgentWorkerModule, a boot error that says so (not Nest's DI error).
    if (!worker) throw new InvalidJobsOptionsException('AgentJobsModule', JOBS_NEED_WORKER_MESSAGE);
  }

  /**
   * The tick of `cron` (in `timeZone`) at or before `at`: the instant every instance computes for one tick, whatever
   * its clock's milliseconds, to pass to postOnce. Throws TypeError for a cron the jobs refuse (cronProblem).
   */
  static tickOf(cron: string, timeZone = 'UTC', at: Date = new Date()): Date {
    const problem = cronProblem(cron, timeZone);
    if (problem) throw new TypeError(problem);
    if (!isDate(at)) throw new TypeError('at must be a valid Date');
    const tick = latestTickAtOrBefore(cron, timeZone, at);
    if (!tick) throw new TypeError(`cron "${cron}" has no tick in the five years before ${at.toISOString()}`);
    return tick;
  }

  /**
   * Claim the tick `tick` of the `@Cron` named `name` across every instance on the job store, and post `goal` only if
   * this caller won: `{ posted: true, runId }` for one caller of a tick, `{ posted: false, runId: null }` for every
   * other. Pass the same `tick` on every instance (AgentJobTicks.tickOf(cron, timeZone)). A bad name, tick or goal
   * throws (TypeError, InvalidGoalException) before anything is claimed. At most once: a winner whose post then fails
   * (a full mailbox, the database away) throws, and that tick is not posted by anyone.
   */
  async postOnce(name: string, tick: Date, goal: AgentTickGoal): Promise<AgentTickOutcome> {
    const store = this.requireStore();
    const problem = cronTickNameProblem(name);
    if (problem) throw new TypeError(`postOnce: ${problem}`);
    if (!isDate(tick)) throw new TypeError('postOnce: tick must be a valid Date (AgentJobTicks.tickOf(cron, timeZone))');
    if (!goal || typeof goal !== 'object') throw new InvalidGoalException('postOnce needs { goal, agent?, tenantId, userId, permissions }');
    const { goal: text, ...scope } = goal;
    this.worker.check(text, this.scopeOf(name, tick, scope));
    if (!(await store.claimCronTick(name, tick))) return { name, tick, posted: false, runId: null };
    return this.post(name, tick, text, scope);
  }

  /**
   * @AgentCron's tick: claim it, then (on the winner only) ask `makeGoal` for the goal (the decorated method; a
   * nullish answer takes `fallback`), then post it. Errors are logged, never thrown.
   */
  async runCron(
    name: string,
    tick: Date,
    scope: AgentTickScope,
    makeGoal: (tick: Date) => unknown,
    fallback: string | undefined,
  ): Promise<AgentTickOutcome> {
    const lost = { name, tick, posted: false, runId: null };
    try {
      if (!(await this.requireStore().claimCronTick(name, tick))) return lost;
    } catch (e) {
      this.logger.error(`@AgentCron "${name}" tick ${tick.toISOString()} could not be claimed: ${(e as Error).message}`);
      return lost;
    }
    let goal: unknown;
    try {
      goal = (await makeGoal(new Date(tick))) ?? fallback;
    } catch (e) {
      this.logger.error(`@AgentCron "${name}" tick ${tick.toISOString()}: the method threw (${(e as Error).message}); nothing is posted`);
      await this.record(name, tick, REFUSED_TICK_RUN_ID);
      return lost;
    }
    try {
      if (typeof goal !== 'string')
        throw new InvalidGoalException(
          `the method returned ${goal === undefined ? 'nothing' : typeof goal}: return the goal (a string), or give goal in @AgentCron`,
        );
      return await this.post(name, tick, goal, scope);
    } catch (e) {
      this.logger.error(`@AgentCron "${name}" tick ${tick.toISOString()} could not post its goal: ${(e as Error).message}`);
      return lost;
    }
  }

  private requireStore(): AgentJobStore {
    return this.store;
  }

  private scopeOf(name: string, tick: Date, scope: AgentTickScope): PostGoalOptions {
    return {
      ...(scope.agent !== undefined ? { agent: scope.agent } : {}),
      tenantId: scope.tenantId,
      userId: scope.userId,
      permissions: scope.permissions,
      jobId: cronTickJobId(name),
      jobTick: tick.toISOString(),
    };
  }

  /** Post the won tick's goal and record its run (or, refused by the worker for good, REFUSED_TICK_RUN_ID). */
  private async post(name: string, tick: Date, goal: string, scope: AgentTickScope): Promise<AgentTickOutcome> {
    try {
      const { runId } = await this.worker.post(goal, this.scopeOf(name, tick, scope));
      await this.record(name, tick, runId);
      return { name, tick, posted: true, runId };
    } catch (e) {
      if (e instanceof InvalidGoalException) await this.record(name, tick, REFUSED_TICK_RUN_ID);
      throw e;
    }
  }

  private async record(name: string, tick: Date, runId: string): Promise<void> {
    await this.store?.setTickRun(cronTickJobId(name), tick, runId).catch((err: Error) => {
      this.logger.error(`the run of @Cron "${name}" tick ${tick.toISOString()} could not be recorded: ${err.message}`);
    });
  }
}
