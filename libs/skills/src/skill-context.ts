import { randomUUID } from 'node:crypto';
import { Guard } from '@zmodu/guard';

/**
 * Who is calling, under which policy. Every caller (agent, HTTP, CLI, job, MCP) builds one;
 * the dispatcher refuses to run without a guard.
 */
export interface SkillContext {
  readonly guard: Guard;
  readonly tenantId?: string;
  readonly userId?: string;
  readonly permissions: readonly string[];
  readonly runId: string;
  readonly agent?: string;
  /** Cancels the call from outside (e.g. the agent run was aborted). */
  readonly signal?: AbortSignal;
}

/** What a handler receives: the caller's context, and `signal`, which aborts at the call's deadline. */
export interface SkillInvocation extends Omit<SkillContext, 'signal'> {
  readonly signal: AbortSignal;
  readonly skill: string;
}

export interface SkillContextInit {
  readonly guard: Guard;
  readonly tenantId?: string | null;
  readonly userId?: string | null;
  readonly permissions?: readonly string[];
  readonly runId?: string;
  readonly agent?: string;
  readonly signal?: AbortSignal;
}

/** Build a SkillContext; `runId` defaults to a new UUID. Empty tenant or user ids count as absent. */
export function createSkillContext(init: SkillContextInit): SkillContext {
  return Object.freeze({
    guard: init.guard,
    tenantId: init.tenantId || undefined,
    userId: init.userId || undefined,
    permissions: Object.freeze([...(init.permissions ?? [])]),
    runId: init.runId ?? randomUUID(),
    agent: init.agent,
    signal: init.signal,
  });
}
