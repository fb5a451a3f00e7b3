import { randomUUID } from 'node:crypto';
import { scopeIdProblem } from '@zmodu/guard';
import { resolveSkillPermissions, SkillError, SkillRegistry } from '@zmodu/skills';
import type { SkillContext, SkillPermissions } from '@zmodu/skills';
import { AgentJobRecord, AgentJobStore, MissedTickPolicy } from './agent-job.ports';
import { cronProblem } from './agent-job-cron';

/** A goal an application allows the model to schedule; the model picks it by name, never writes a goal. */
export interface SchedulableTask {
  readonly name: string;
  readonly agent?: string;
  readonly goal: string;
  readonly description?: string;
}

/** The names of the job skills, the keys of `jobs.permissions`. */
export const AGENT_JOB_SKILL_NAMES = ['list_schedulable_tasks', 'schedule_job', 'list_jobs', 'cancel_job'] as const;
/** The permission code each job skill requires, e.g. `{ schedule_job: 'job:schedule' }`; a skill left out requires none. */
export type AgentJobSkillPermissions = SkillPermissions<(typeof AGENT_JOB_SKILL_NAMES)[number]>;

export interface AgentJobSkillsOptions {
  readonly schedulableTasks: readonly SchedulableTask[];
  /** Active jobs a tenant may hold (default 20). */
  readonly maxJobsPerTenant?: number;
  /** The permission code each skill requires (checked: see resolveSkillPermissions); default none. */
  readonly permissions?: AgentJobSkillPermissions;
}

type Caller = Pick<SkillContext, 'tenantId' | 'userId' | 'permissions'>;

const view = (j: AgentJobRecord) => ({
  id: j.id,
  agent: j.agent,
  goal: j.goal,
  cron: j.cron,
  timeZone: j.timeZone,
  missed: j.missed,
  createdBy: j.userId,
  lastTickAt: j.lastTickAt?.toISOString() ?? null,
});

/**
 * The skills of scheduled jobs. Tenant, user and permissions always come from the caller's context: a job runs
 * with the permissions of the user who created it, never more; a tenant sees and cancels its own jobs only.
 */
export class AgentJobSkills {
  private readonly tasks = new Map<string, SchedulableTask>();
  private readonly maxJobsPerTenant: number;
  private readonly permissions: AgentJobSkillPermissions;

  constructor(
    private readonly store: AgentJobStore,
    options: AgentJobSkillsOptions,
  ) {
    this.permissions = resolveSkillPermissions(options.permissions, AGENT_JOB_SKILL_NAMES, 'jobs.permissions', (field, problem) => {
      throw new TypeError(`${field}: ${problem}`);
    });
    for (const t of options.schedulableTasks ?? []) {
      if (!t || typeof t.name !== 'string' || !t.name.trim() || typeof t.goal !== 'string' || !t.goal.trim())
        throw new TypeError('jobs.schedulableTasks: each task needs a non-empty name and goal');
      if (this.tasks.has(t.name)) throw new TypeError(`jobs.schedulableTasks: the task name "${t.name}" is used twice`);
      this.tasks.set(t.name, t);
    }
    this.maxJobsPerTenant = options.maxJobsPerTenant ?? 20;
    if (!Number.isInteger(this.maxJobsPerTenant) || this.maxJobsPerTenant < 1)
      throw new TypeError(`jobs.maxJobsPerTenant must be a positive integer (got ${String(options.maxJobsPerTenant)})`);
  }

  private caller(ctx: Caller): { tenantId: string; userId: string } {
    // The worker's rule for tenant and user ids (no '0', no control character): a job it would refuse at every tick
    // is refused here, when it is scheduled.
    const tenant = scopeIdProblem('tenantId', ctx.tenantId);
    if (tenant) throw new SkillError('tenant_required', `Scheduled jobs need a tenant in the caller context (${tenant}).`);
    const user = scopeIdProblem('userId', ctx.userId);
    if (user) throw new SkillError('user_required', `Scheduled jobs need a user in the caller context (${user}).`);
    return { tenantId: ctx.tenantId as string, userId: ctx.userId as string };
  }

  listSchedulableTasks(ctx: Caller) {
    this.caller(ctx);
    return [...this.tasks.values()].map((t) => ({ name: t.name, agent: t.agent ?? null, description: t.description ?? t.goal }));
  }

  async scheduleJob(args: { task: string; cron: string; timeZone?: string; missed?: MissedTickPolicy }, ctx: Caller) {
    const { tenantId, userId } = this.caller(ctx);
    const task = typeof args.task === 'string' ? this.tasks.get(args.task) : undefined;
    if (!task) throw new SkillError('unknown_task', `No schedulable task '${String(args.task)}'; call list_schedulable_tasks.`);
    const timeZone = args.timeZone ?? 'UTC';
    const problem = cronProblem(args.cron, timeZone);
    if (problem) throw new SkillError('invalid_cron', problem);
    const missed = args.missed ?? 'skip';
    if (missed !== 'skip' && missed !== 'catch_up') throw new SkillError('invalid_missed', "missed must be 'skip' or 'catch_up'.");
    if ((await this.store.count(tenantId)) >= this.maxJobsPerTenant)
      throw new SkillError('too_many_jobs', `This tenant already has ${this.maxJobsPerTenant} jobs; cancel one first.`);
    const id = randomUUID();
    await this.store.upsert({
      id,
      tenantId,
      userId,
      permissions: [...ctx.permissions],
      agent: task.agent ?? null,
      goal: task.goal,
      cron: args.cron,
      timeZone,
      missed,
      origin: 'dynamic',
    });
    return { jobId: id };
  }

  async listJobs(ctx: Caller) {
    const { tenantId } = this.caller(ctx);
    return (await this.store.list(tenantId)).map(view);
  }

  async cancelJob(args: { jobId: string }, ctx: Caller) {
    const { tenantId } = this.caller(ctx);
    const job = typeof args.jobId === 'string' ? await this.store.get(tenantId, args.jobId) : null;
    if (job?.origin === 'static')
      throw new SkillError(
        'static_job',
        `Job '${job.id}' is declared in the application's code (@AgentJob); it cannot be cancelled here. Ask its developers to remove the declaration.`,
      );
    if (typeof args.jobId !== 'string' || !(await this.store.cancel(tenantId, args.jobId)))
      throw new SkillError('not_found', `No job '${String(args.jobId)}' of this tenant.`);
    return { cancelled: true };
  }

  /** Register list_schedulable_tasks, schedule_job, list_jobs and cancel_job. */
  register(registry: SkillRegistry): void {
    const source = 'AgentModule';
    registry.register({
      name: 'list_schedulable_tasks',
      requiredPermission: this.permissions.list_schedulable_tasks,
      action: 'read',
      source,
      description: 'List the tasks this application allows to be scheduled (name, agent, description).',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      handler: (_args, ctx) => this.listSchedulableTasks(ctx),
    });
    registry.register({
      name: 'schedule_job',
      requiredPermission: this.permissions.schedule_job,
      action: 'execute',
      source,
      description:
        'Schedule a task (by name, from list_schedulable_tasks) on a cron expression (5 fields, at most once a minute) in a time zone. ' +
        'It runs as the current user with their permissions. missed: skip (default) or catch_up (run once after downtime).',
      parameters: {
        type: 'object',
        properties: {
          task: { type: 'string' },
          cron: { type: 'string' },
          timeZone: { type: 'string' },
          missed: { type: 'string', enum: ['skip', 'catch_up'] },
        },
        required: ['task', 'cron'],
        additionalProperties: false,
      },
      handler: (args, ctx) => this.scheduleJob(args as { task: string; cron: string }, ctx),
    });
    registry.register({
      name: 'list_jobs',
      requiredPermission: this.permissions.list_jobs,
      action: 'read',
      source,
      description: "List this tenant's scheduled jobs.",
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      handler: (_args, ctx) => this.listJobs(ctx),
    });
    registry.register({
      name: 'cancel_job',
      requiredPermission: this.permissions.cancel_job,
      action: 'execute',
      source,
      description: "Cancel one of this tenant's scheduled jobs by id.",
      parameters: { type: 'object', properties: { jobId: { type: 'string' } }, required: ['jobId'], additionalProperties: false },
      handler: (args, ctx) => this.cancelJob(args as { jobId: string }, ctx),
    });
  }
}
