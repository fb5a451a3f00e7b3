import type { StoreChoice } from '@zmodu/core';
import type { AgentJobStore } from './agent-job.ports';
import { DEFAULT_JOB_SYNC_MS } from './agent-job-scheduler';
import { DEFAULT_MAX_JOB_LIFETIME_MS } from './agent-job-skills';
import type { AgentJobSkillPermissions, SchedulableTask } from './agent-job-skills';

/** `AgentJobsModule.forRoot(options)`: scheduled agent jobs (needs AgentWorkerModule). Every field has a default. */
export class AgentJobsOptions {
  /** Where jobs and their tick claims are stored: the app's TypeORM DataSource (default), this process's memory, or yours. */
  store?: StoreChoice<AgentJobStore> = 'typeorm';
  /** How often the store is read again, to pick up jobs created or cancelled on another instance (ms). */
  syncMs?: number = DEFAULT_JOB_SYNC_MS;
  /** The goals the `schedule_job` skill may schedule, by name; the model never writes a goal. */
  schedulableTasks?: SchedulableTask[] = [];
  /** Active jobs a tenant may hold (the `schedule_job` cap, counted and inserted atomically). */
  maxJobsPerTenant?: number = 20;
  /**
   * How long a job `schedule_job` creates lives at most (ms; default 90 days): its `expiresAt` may not be later, and a
   * job scheduled without one expires then. An expired job fires no more.
   */
  maxJobLifetimeMs?: number = DEFAULT_MAX_JOB_LIFETIME_MS;
  /**
   * The permission code each job skill requires of its caller, e.g. `{ list_jobs: 'job:read', schedule_job: 'job:schedule' }`
   * (keys: list_schedulable_tasks, schedule_job, list_jobs, cancel_job): without it the dispatcher refuses the call
   * (PermissionDenied). Default `{}`: none requires one.
   */
  permissions?: AgentJobSkillPermissions = {};
}

/** The options with every default applied and every field checked. */
export interface ResolvedAgentJobsOptions {
  readonly store: StoreChoice<AgentJobStore>;
  readonly syncMs: number;
  readonly schedulableTasks: readonly SchedulableTask[];
  readonly maxJobsPerTenant: number;
  readonly maxJobLifetimeMs: number;
  readonly permissions: AgentJobSkillPermissions;
}
