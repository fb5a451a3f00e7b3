/** Scheduled agent jobs (issue 13): the job records and the per-tick claims. */

/** What happens to ticks missed while no instance was running: nothing, or one run for the latest missed tick. */
export type MissedTickPolicy = 'skip' | 'catch_up';
/** `static`: declared with @AgentJob (upserted at boot). `dynamic`: created at run time (the `schedule_job` skill). */
export type AgentJobOrigin = 'static' | 'dynamic';

export interface NewAgentJob {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  /** The permissions of the user who created the job: its runs never get more. */
  readonly permissions: readonly string[];
  readonly agent: string | null;
  readonly goal: string;
  readonly cron: string;
  readonly timeZone: string;
  readonly missed: MissedTickPolicy;
  readonly origin: AgentJobOrigin;
}

export interface AgentJobRecord extends NewAgentJob {
  readonly createdAt: Date;
  readonly cancelledAt: Date | null;
  /** The latest tick claimed for this job (by any instance), null before the first. */
  readonly lastTickAt: Date | null;
}

/**
 * The job records and their tick claims. `claimTick` is one conditional INSERT on (job, tick): a tick runs once
 * even when several instances on one database fire it.
 */
export interface AgentJobStore {
  /**
   * Insert a job, or (same id) replace its definition keeping created_at and the last tick. A dynamic job keeps its
   * cancellation; a static job is active again (only retirement cancels one: its declaration is back).
   */
  upsert(job: NewAgentJob): Promise<void>;
  /** Cancel the static jobs whose ids are not in `keepIds` (their @AgentJob is gone); returns the ids cancelled. */
  retireStatic(keepIds: readonly string[]): Promise<string[]>;
  /**
   * One job of this tenant (null for another tenant's id or an unknown one). Here and in list, count and cancel, a
   * tenant id that is not one under scopeIdProblem's rule ('0', blank, control characters) finds nothing.
   */
  get(tenantId: string, jobId: string): Promise<AgentJobRecord | null>;
  /** The tenant's jobs that are not cancelled, oldest first. */
  list(tenantId: string): Promise<AgentJobRecord[]>;
  /** Every job that is not cancelled (what the scheduler runs). */
  active(): Promise<AgentJobRecord[]>;
  /** Number of jobs of the tenant that are not cancelled (the per-tenant cap). */
  count(tenantId: string): Promise<number>;
  /** Cancel a job of this tenant; false when the tenant has no such active job. */
  cancel(tenantId: string, jobId: string): Promise<boolean>;
  /** Claim (job, tick): true for exactly one caller; also moves last_tick_at forward. */
  claimTick(jobId: string, tick: Date): Promise<boolean>;
  /** Record the run started for a claimed tick (or REFUSED_TICK_RUN_ID: the worker refused its goal for good). */
  setTickRun(jobId: string, tick: Date, runId: string): Promise<void>;
  /**
   * Ticks claimed more than `olderThanMs` ago whose goal was never posted (their instance died between the claim and
   * the post, or the post was refused for a while, e.g. by a full mailbox), of active jobs, for ticks of the last day, with no run stored for them:
   * claimed again (claim time renewed, one conditional write, so one caller gets each) to be posted now. At most `limit`.
   */
  reclaimUnposted(olderThanMs: number, limit: number): Promise<{ job: AgentJobRecord; tick: Date }[]>;
}
