import { Logger, SetMetadata } from '@nestjs/common';
import { scopeIdProblem } from '@zmodu/core';
import { cronProblem, latestTickAtOrBefore } from './agent-job-cron';
import type { AgentJobTicks, AgentTickOutcome } from './agent-job-ticks';
import { cronTickNameProblem } from './agent-job-ticks';
import { loadSchedulePackage } from './schedule-package';

export const AGENT_CRON_METADATA = 'zmodu:agent-cron';

/** `@AgentCron(cron, options)`: who the tick's goal runs as, and under which name its ticks are claimed. */
export interface AgentCronOptions {
  /** The @Cron's name in the SchedulerRegistry, unique in the application; its ticks are claimed as `cron:<name>`. */
  readonly name: string;
  /** Optional when the application defines exactly one agent. */
  readonly agent?: string;
  /** IANA time zone the cron is read in (default 'UTC'). */
  readonly timeZone?: string;
  readonly tenantId: string;
  readonly userId: string;
  /** The permissions the run gets, never more. */
  readonly permissions: readonly string[];
  /** The goal when the method returns nothing. */
  readonly goal?: string;
}

/** What AgentModule finds on a method decorated with @AgentCron. */
export interface AgentCronDefinition extends AgentCronOptions {
  readonly cron: string;
  readonly timeZone: string;
}

/** Why `@AgentCron(cron, options)` cannot run, or null. */
export function agentCronProblem(cron: unknown, o: AgentCronOptions): string | null {
  if (!o || typeof o !== 'object') return '@AgentCron(cron, { name, tenantId, userId, permissions, agent?, timeZone?, goal? })';
  const nameProblem = cronTickNameProblem(o.name);
  if (nameProblem) return `@AgentCron: ${nameProblem}`;
  const where = `@AgentCron "${o.name}": `;
  const timing = cronProblem(cron, o.timeZone ?? 'UTC');
  if (timing) return where + timing;
  const tenant = scopeIdProblem('tenantId', o.tenantId);
  if (tenant) return `${where}tenantId is required: the tenant the goal runs for (${tenant})`;
  const user = scopeIdProblem('userId', o.userId);
  if (user) return `${where}userId is required: the user the goal runs as (${user})`;
  if (!Array.isArray(o.permissions) || o.permissions.some((p) => typeof p !== 'string'))
    return `${where}permissions must be an array of strings (the run gets these, never more)`;
  if (o.agent !== undefined && (typeof o.agent !== 'string' || !o.agent.trim())) return `${where}agent must be a non-empty name`;
  if (o.goal !== undefined && (typeof o.goal !== 'string' || !o.goal.trim())) return `${where}goal, when given, must be a non-empty string`;
  return null;
}

/** The AgentJobTicks of the application each provider instance belongs to (set by AgentModule at module init). */
const ticksOf = new WeakMap<object, AgentJobTicks>();

/** AgentModule binds the instance whose @AgentCron methods it found to its application's AgentJobTicks. */
export function bindAgentCron(instance: object, ticks: AgentJobTicks): void {
  ticksOf.set(instance, ticks);
}

const logger = new Logger('AgentCron');
const isDate = (v: unknown): v is Date => Object.prototype.toString.call(v) === '[object Date]' && Number.isFinite((v as Date).getTime());

/**
 * A `@Cron` of @nestjs/schedule whose goal runs once per tick across the cluster. The method is registered with
 * `@Cron(cron, { name, timeZone })` (so it is in the SchedulerRegistry under `name`), and fires on every instance; each
 * firing claims the tick (`cron:<name>`, the latest tick at or before now) in the job store, and on the one instance
 * that won, the method is called with the tick and its answer (a goal string; nothing: `options.goal`) is posted to
 * the AgentWorker with the options' agent, tenant, user and permissions. Its arguments are checked when applied (a bad
 * cron or a missing tenant fails at import); it needs `@nestjs/schedule`, `ScheduleModule.forRoot()` and AgentModule's
 * `jobs` option (the boot fails naming what is missing).
 *
 * Called directly (a test), `method(tick?: Date)` claims the tick at or before `tick` (default now) the same way and
 * resolves to the AgentTickOutcome.
 */
export function AgentCron(cron: string, options: AgentCronOptions): MethodDecorator {
  const problem = agentCronProblem(cron, options);
  if (problem) throw new TypeError(problem);
  const schedule = loadSchedulePackage(`@AgentCron "${options.name}"`);
  const definition: AgentCronDefinition = Object.freeze({
    ...options,
    cron,
    timeZone: options.timeZone ?? 'UTC',
    permissions: Object.freeze([...options.permissions]),
  });
  const { name, goal: fallback, timeZone } = definition;
  const scope = {
    ...(definition.agent !== undefined ? { agent: definition.agent } : {}),
    tenantId: definition.tenantId,
    userId: definition.userId,
    permissions: definition.permissions,
  };
  return <T>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<T>): TypedPropertyDescriptor<T> => {
    const original = descriptor.value as unknown;
    if (typeof original !== 'function') throw new TypeError(`@AgentCron "${name}" goes on a method`);
    const owner = `${target.constructor?.name ?? 'a class'}.${String(key)}`;
    const fired = async function (this: object, at?: unknown): Promise<AgentTickOutcome | null> {
      const ticks = ticksOf.get(this);
      if (!ticks) {
        logger.error(`@AgentCron "${name}" on ${owner} fired in an instance AgentModule did not bind: nothing is posted`);
        return null;
      }
      const tick = latestTickAtOrBefore(cron, timeZone, isDate(at) ? at : new Date());
      if (!tick) return null;
      return ticks.runCron(name, tick, scope, (t) => (original as (tick: Date) => unknown).call(this, t), fallback);
    };
    Object.defineProperty(fired, 'name', { value: (original as { name: string }).name });
    descriptor.value = fired as unknown as T;
    SetMetadata(AGENT_CRON_METADATA, definition)(target, key, descriptor);
    schedule.Cron(cron, { name, timeZone })(target, key, descriptor);
    return descriptor;
  };
}
