import { SetMetadata } from '@nestjs/common';
import { scopeIdProblem } from '@zmodu/core';
import { MissedTickPolicy, NewAgentJob } from './agent-job.ports';
import { cronProblem } from './agent-job-cron';

export const AGENT_JOB_METADATA = 'zmodu:agent-job';

/** A static job: declared in code, upserted into the job store at boot under the id `static:<name>`. */
export interface AgentJobDefinition {
  /** Unique among the application's static jobs; the job id is `static:<name>`. */
  readonly name: string;
  readonly agent?: string;
  readonly cron: string;
  readonly timeZone: string;
  readonly goal: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
  readonly missed?: MissedTickPolicy;
}

/** Why a static job definition cannot run, or null. */
export function agentJobProblem(d: AgentJobDefinition): string | null {
  if (!d || typeof d !== 'object') return 'pass { name, cron, timeZone, goal, tenantId, userId, permissions }';
  if (typeof d.name !== 'string' || !d.name.trim()) return 'name is required (unique among static jobs)';
  const where = `@AgentJob "${d.name}": `;
  const cron = cronProblem(d.cron, d.timeZone);
  if (cron) return where + cron;
  if (typeof d.goal !== 'string' || !d.goal.trim()) return `${where}goal is required`;
  // The worker's rule for tenant and user ids: a job it would refuse at every tick fails at import.
  const tenant = scopeIdProblem('tenantId', d.tenantId);
  if (tenant) return `${where}tenantId is required: the tenant the job runs for (${tenant})`;
  const user = scopeIdProblem('userId', d.userId);
  if (user) return `${where}userId is required: the user the job runs as (${user})`;
  if (!Array.isArray(d.permissions) || d.permissions.some((p) => typeof p !== 'string'))
    return `${where}permissions must be an array of strings (the job runs with these, never more)`;
  if (d.missed !== undefined && d.missed !== 'skip' && d.missed !== 'catch_up') return `${where}missed must be 'skip' or 'catch_up'`;
  if (d.agent !== undefined && (typeof d.agent !== 'string' || !d.agent.trim())) return `${where}agent must be a non-empty name`;
  return null;
}

/**
 * Declare a static scheduled job on a class or method. The definition is validated when the decorator is applied,
 * so a bad cron or a missing tenant fails at import, saying what to fix.
 */
export function AgentJob(definition: AgentJobDefinition): ClassDecorator & MethodDecorator {
  const problem = agentJobProblem(definition);
  if (problem) throw new TypeError(problem);
  return SetMetadata(AGENT_JOB_METADATA, Object.freeze({ ...definition, permissions: [...definition.permissions] }));
}

/** The store record of a static job. */
export function staticAgentJob(d: AgentJobDefinition): NewAgentJob {
  return {
    id: `static:${d.name}`,
    tenantId: d.tenantId,
    userId: d.userId,
    permissions: [...d.permissions],
    agent: d.agent ?? null,
    goal: d.goal,
    cron: d.cron,
    timeZone: d.timeZone,
    missed: d.missed ?? 'skip',
    origin: 'static',
    task: null,
    expiresAt: null,
  };
}
