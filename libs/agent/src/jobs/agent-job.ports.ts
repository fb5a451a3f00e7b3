/** Scheduled agent jobs (issue 13): the job records and the per-tick claims. */

/** The job id under which a tick of an application's `@Cron` named `name` is claimed: `cron:<name>`. */
export function cronTickJobId(name: string): string {
  return `cron:${name}`;
}

/** What happens to ticks missed while no instance was running: nothing, or one run for the latest missed tick. */
export type MissedTickPolicy = 'skip' | 'catch_up';
/** `static`: declared with @AgentJob (upserted at boot). `dynamic`: created at run time (the `schedule_job` skill). */
export type AgentJobOrigin = 'static' | 'dynamic';

export interface NewAgentJob {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  /**
   * The permissions its runs get: for a dynamic job, those its task declares that its creator held (never more than
   * either); for a static job, those its @AgentJob declares.
   */
  readonly permissions: readonly string[];
  readonly agent: string | null;
  readonly goal: string;
  readonly cron: string;
  readonly timeZone: string;
  readonly missed: MissedTickPolicy;
  readonly origin: AgentJobOrigin;
  /** The schedulable task a dynamic job was made from (null for a static job, and for one stored before tasks were recorded). */
  readonly task?: string | null;
  /** From this instant the job fires no more (null: never; a static job). */
  readonly expiresAt?: Date | null;
}

export interface AgentJobRecord extends NewAgentJob {
  readonly task: string | null;
  readonly expiresAt: Date | null;
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
   * Insert a new job unless its tenant already has `maxActive` active jobs (neither cancelled nor expired): the count
   * and the insert are one atomic step (the tenant's jobs are locked while counted), so callers at once never pass the
   * cap. True when inserted, false at the cap.
   */
  create(job: NewAgentJob, maxActive: number): Promise<boolean>;
  /**
   * One job of this tenant (null for another tenant's id or an unknown one). Here and in list, count and cancel, a
   * tenant id that is not one under scopeIdProblem's rule ('0', blank, control characters) finds nothing.
   */
  get(tenantId: string, jobId: string): Promise<AgentJobRecord | null>;
  /** The tenant's jobs that are not cancelled, oldest first; an expired one is listed (with its `expiresAt`) until cancelled. */
  list(tenantId: string): Promise<AgentJobRecord[]>;
  /** Every job that is neither cancelled nor expired (what the scheduler runs). */
  active(): Promise<AgentJobRecord[]>;
  /** Number of jobs of the tenant that are neither cancelled nor expired (what the per-tenant cap counts). */
  count(tenantId: string): Promise<number>;
  /** Cancel a job of this tenant; false when the tenant has no such active job. */
  cancel(tenantId: string, jobId: string): Promise<boolean>;
  /** Claim (job, tick) of a job neither cancelled nor expired: true for exactly one caller; also moves last_tick_at forward. */
  claimTick(jobId: string, tick: Date): Promise<boolean>;
  /**
   * Claim a tick of a `@Cron` of the application (AgentJobTicks, @AgentCron): one conditional INSERT of
   * (`cron:<name>`, tick) into the tick table the jobs use, true for exactly one caller across every instance on the
   * store. No job row is needed (and none is read); its run is recorded with setTickRun(cronTickJobId(name), ...). Such
   * a tick is never reclaimed: its goal lives in the application's code, not in the store.
   */
  claimCronTick(name: string, tick: Date): Promise<boolean>;
  /** Record the run started for a claimed tick (or REFUSED_TICK_RUN_ID: the worker refused its goal for good). */
  setTickRun(jobId: string, tick: Date, runId: string): Promise<void>;
  /**
   * Ticks claimed more than `olderThanMs` ago whose goal was never posted (their instance died between the claim and
   * the post, or the post was refused for a while, e.g. by a full mailbox), of active jobs (neither cancelled nor expired), for ticks of the last day, with no run stored for them:
   * claimed again (claim time renewed, one conditional write, so one caller gets each) to be posted now. At most `limit`.
   */
  reclaimUnposted(olderThanMs: number, limit: number): Promise<{ job: AgentJobRecord; tick: Date }[]>;
}
