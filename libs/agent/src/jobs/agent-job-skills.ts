import { randomUUID } from 'node:crypto';
import { scopeIdProblem } from '@zmodu/core';
import { defineSkill, SkillError, SkillRegistry } from '@zmodu/skills';
import { permissionCodeProblem, resolveSkillPermissions } from '@zmodu/skills/internal';
import type { SkillContext, SkillPermissions } from '@zmodu/skills';
import { AgentJobRecord, AgentJobStore, MissedTickPolicy, NewAgentJob } from './agent-job.ports';
import { cronProblem, nextTick } from './agent-job-cron';

/** A goal an application allows the model to schedule; the model picks it by name, never writes a goal. */
export interface SchedulableTask {
  readonly name: string;
  readonly agent?: string;
  readonly goal: string;
  readonly description?: string;
  /**
   * The permission codes the task's runs need, e.g. `['report:read']`. A job scheduled from it keeps those of them that
   * its creator holds, none of the creator's others. A task that declares none runs with none (fail closed): its runs
   * may call only skills that require no permission.
   */
  readonly permissions?: readonly string[];
}

/** How long a scheduled job lives at most, and by default (90 days). */
export const DEFAULT_MAX_JOB_LIFETIME_MS = 90 * 86_400_000;
/** The bounds of `jobs.maxJobLifetimeMs`: a minute to ten years. */
const MIN_JOB_LIFETIME_MS = 60_000;
const MAX_JOB_LIFETIME_MS = 3650 * 86_400_000;
/** An instant with a date, a time and a zone (what `expiresAt` takes). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The names of the job skills, the keys of `jobs.permissions`. */
export const AGENT_JOB_SKILL_NAMES = ['list_schedulable_tasks', 'schedule_job', 'list_jobs', 'cancel_job'] as const;
/** The permission code each job skill requires, e.g. `{ schedule_job: 'job:schedule' }`; a skill left out requires none. */
export type AgentJobSkillPermissions = SkillPermissions<(typeof AGENT_JOB_SKILL_NAMES)[number]>;

export interface AgentJobSkillsOptions {
  readonly schedulableTasks: readonly SchedulableTask[];
  /** Active jobs a tenant may hold (default 20). */
  readonly maxJobsPerTenant?: number;
  /**
   * How long a scheduled job lives at most (ms, default 90 days): `schedule_job`'s `expiresAt` may not be later, and a job
   * scheduled without one expires then. An expired job fires no more.
   */
  readonly maxJobLifetimeMs?: number;
  /** The permission code each skill requires (checked: see resolveSkillPermissions); default none. */
  readonly permissions?: AgentJobSkillPermissions;
}

type Caller = Pick<SkillContext, 'tenantId' | 'userId' | 'permissions'>;

const view = (j: AgentJobRecord) => ({
  id: j.id,
  task: j.task,
  agent: j.agent,
  goal: j.goal,
  cron: j.cron,
  timeZone: j.timeZone,
  missed: j.missed,
  createdBy: j.userId,
  permissions: j.permissions,
  lastTickAt: j.lastTickAt?.toISOString() ?? null,
  expiresAt: j.expiresAt?.toISOString() ?? null,
  expired: j.expiresAt !== null && j.expiresAt.getTime() <= Date.now(),
});

/** The fields of a job's definition (what upsert takes), without what the store keeps of its life. */
function definition(j: AgentJobRecord): NewAgentJob {
  const { createdAt: _created, cancelledAt: _cancelled, lastTickAt: _last, ...job } = j;
  return job;
}

/**
 * The skills of scheduled jobs. Tenant, user and permissions always come from the caller's context: a job runs with the
 * permissions its task declares that the user who created it holds, never more; it expires (at most
 * `maxJobLifetimeMs` after it was scheduled); a tenant sees and cancels its own jobs only.
 */
export class AgentJobSkills {
  private readonly tasks = new Map<string, SchedulableTask & { readonly permissions: readonly string[] }>();
  private readonly maxJobsPerTenant: number;
  private readonly maxJobLifetimeMs: number;
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
      const declared: unknown = t.permissions ?? [];
      if (!Array.isArray(declared))
        throw new TypeError(`jobs.schedulableTasks: task "${t.name}": permissions must be an array of the permission codes its runs need`);
      for (const code of declared) {
        const problem = permissionCodeProblem(code);
        if (problem) throw new TypeError(`jobs.schedulableTasks: task "${t.name}": permissions: ${problem}`);
      }
      this.tasks.set(t.name, { ...t, permissions: Object.freeze([...new Set(declared as string[])]) });
    }
    this.maxJobsPerTenant = options.maxJobsPerTenant ?? 20;
    if (!Number.isInteger(this.maxJobsPerTenant) || this.maxJobsPerTenant < 1)
      throw new TypeError(`jobs.maxJobsPerTenant must be a positive integer (got ${String(options.maxJobsPerTenant)})`);
    this.maxJobLifetimeMs = options.maxJobLifetimeMs ?? DEFAULT_MAX_JOB_LIFETIME_MS;
    if (
      !Number.isInteger(this.maxJobLifetimeMs) ||
      this.maxJobLifetimeMs < MIN_JOB_LIFETIME_MS ||
      this.maxJobLifetimeMs > MAX_JOB_LIFETIME_MS
    )
      throw new TypeError(
        `jobs.maxJobLifetimeMs must be an integer from ${MIN_JOB_LIFETIME_MS} (a minute) to ${MAX_JOB_LIFETIME_MS} (ten years) ms, got ${String(options.maxJobLifetimeMs)}`,
      );
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
    return [...this.tasks.values()].map((t) => ({
      name: t.name,
      agent: t.agent ?? null,
      description: t.description ?? t.goal,
      permissions: t.permissions,
    }));
  }

  /**
   * When a job scheduled now expires: `expiresAt` (an ISO instant with a zone), at most maxJobLifetimeMs away, after the
   * job's first tick; without one, maxJobLifetimeMs from now. A SkillError (`invalid_expiry`) says what to send instead.
   */
  private expiry(expiresAt: unknown, cron: string, timeZone: string): Date {
    const now = Date.now();
    const days = Math.round(this.maxJobLifetimeMs / 86_400_000);
    const latest = now + this.maxJobLifetimeMs;
    let at = latest;
    if (expiresAt !== undefined) {
      const shown = JSON.stringify(typeof expiresAt === 'string' ? expiresAt.slice(0, 40) : typeof expiresAt);
      at = typeof expiresAt === 'string' && ISO_INSTANT.test(expiresAt) ? Date.parse(expiresAt) : Number.NaN;
      if (Number.isNaN(at))
        throw new SkillError(
          'invalid_expiry',
          `expiresAt must be a date and time with a zone, like '2026-12-31T18:00:00Z' (got ${shown}).`,
        );
      if (at <= now) throw new SkillError('invalid_expiry', `expiresAt ${shown} is not in the future: give a later time.`);
      if (at > latest)
        throw new SkillError(
          'invalid_expiry',
          `expiresAt ${shown} is more than ${days} days away: a job lives at most that long here. Give an earlier time, or none (the job then expires in ${days} days).`,
        );
    }
    const first = nextTick(cron, timeZone, new Date(now));
    if (first.getTime() >= at)
      throw new SkillError(
        'invalid_expiry',
        `The job would expire (${new Date(at).toISOString()}) before its first tick (${first.toISOString()}): it would never run. Give a later expiresAt or a more frequent cron.`,
      );
    return new Date(at);
  }

  async scheduleJob(args: { task: string; cron: string; timeZone?: string; missed?: MissedTickPolicy; expiresAt?: string }, ctx: Caller) {
    const { tenantId, userId } = this.caller(ctx);
    const task = typeof args.task === 'string' ? this.tasks.get(args.task) : undefined;
    if (!task) throw new SkillError('unknown_task', `No schedulable task '${String(args.task)}'; call list_schedulable_tasks.`);
    const timeZone = args.timeZone ?? 'UTC';
    const problem = cronProblem(args.cron, timeZone);
    if (problem) throw new SkillError('invalid_cron', problem);
    const missed = args.missed ?? 'skip';
    if (missed !== 'skip' && missed !== 'catch_up') throw new SkillError('invalid_missed', "missed must be 'skip' or 'catch_up'.");
    const expiresAt = this.expiry(args.expiresAt, args.cron, timeZone);
    // What the task needs of what the creator holds: never the creator's other permissions, never one the task lacks.
    const held = new Set(ctx.permissions);
    const permissions = task.permissions.filter((p) => held.has(p));
    const id = randomUUID();
    const job: NewAgentJob = {
      id,
      tenantId,
      userId,
      permissions,
      agent: task.agent ?? null,
      goal: task.goal,
      cron: args.cron,
      timeZone,
      missed,
      origin: 'dynamic',
      task: task.name,
      expiresAt,
    };
    // The cap and the insert are one step in the store: callers at once cannot pass it.
    if (!(await this.store.create(job, this.maxJobsPerTenant)))
      throw new SkillError('too_many_jobs', `This tenant already has ${this.maxJobsPerTenant} active jobs; cancel one first.`);
    return { jobId: id, permissions, expiresAt: expiresAt.toISOString() };
  }

  /**
   * A stored dynamic job as its task allows it now, or null when it needs no change: its permissions cut to those its
   * task declares (never widened; none when the task is gone), its task found by name (or, for a job stored before tasks
   * were recorded, by its goal and agent), and an expiry `maxJobLifetimeMs` from `now` if it had none. AgentJobsRunner
   * narrows the stored jobs so at each boot.
   */
  narrowed(job: AgentJobRecord, now = Date.now()): NewAgentJob | null {
    if (job.origin !== 'dynamic') return null;
    const task =
      job.task !== null
        ? this.tasks.get(job.task)
        : [...this.tasks.values()].find((t) => t.goal === job.goal && (t.agent ?? null) === job.agent);
    const allowed = new Set(task?.permissions ?? []);
    const permissions = job.permissions.filter((p) => allowed.has(p));
    const name = job.task ?? task?.name ?? null;
    if (permissions.length === job.permissions.length && job.expiresAt !== null && name === job.task) return null;
    return { ...definition(job), permissions, task: name, expiresAt: job.expiresAt ?? new Date(now + this.maxJobLifetimeMs) };
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
      description: 'List the tasks this application allows to be scheduled (name, agent, description, the permissions its runs need).',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      handler: (_args, ctx) => this.listSchedulableTasks(ctx),
    });
    registry.register(
      defineSkill({
        name: 'schedule_job',
        requiredPermission: this.permissions.schedule_job,
        action: 'execute',
        source,
        description:
          'Schedule a task (by name, from list_schedulable_tasks) on a cron expression (5 fields, at most once a minute) in a time zone. ' +
          'It runs as the current user with the permissions the task needs that they hold. missed: skip (default) or catch_up (run once ' +
          'after downtime). expiresAt (optional, e.g. 2026-12-31T18:00:00Z): when it stops; by default, and at the latest, ' +
          `${Math.round(this.maxJobLifetimeMs / 86_400_000)} days from now.`,
        parameters: {
          type: 'object',
          properties: {
            task: { type: 'string' },
            cron: { type: 'string' },
            timeZone: { type: 'string' },
            missed: { type: 'string', enum: ['skip', 'catch_up'] },
            expiresAt: { type: 'string', maxLength: 40 },
          },
          required: ['task', 'cron'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.scheduleJob(args, ctx),
      }),
    );
    registry.register({
      name: 'list_jobs',
      requiredPermission: this.permissions.list_jobs,
      action: 'read',
      source,
      description: "List this tenant's scheduled jobs.",
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      handler: (_args, ctx) => this.listJobs(ctx),
    });
    registry.register(
      defineSkill({
        name: 'cancel_job',
        requiredPermission: this.permissions.cancel_job,
        action: 'execute',
        source,
        description: "Cancel one of this tenant's scheduled jobs by id.",
        parameters: {
          type: 'object',
          properties: { jobId: { type: 'string' } },
          required: ['jobId'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.cancelJob(args, ctx),
      }),
    );
  }
}
