import { randomUUID } from 'node:crypto';
import { Guard } from '@zmodu/guard';
import type { SkillTransaction } from './transaction';

/**
 * A staged execution: the proposal pipeline runs an approved proposal. Only such a context may
 * dispatch a staged skill; it is made by `stagedExecution()` (the pipeline's), not by hand.
 */
export interface StagedExecution {
  readonly proposalId: string;
  /** Who approved, in step order (empty for a proposal the risk review let through). */
  readonly approvers: readonly string[];
  /** The transaction that marks the proposal executed: write through it and both commit, or neither. */
  readonly transaction: SkillTransaction;
}

const STAGED = new WeakSet<object>();

/** @internal For the proposal pipeline: the staged part of the context it dispatches an approved proposal with. */
export function stagedExecution(init: StagedExecution): StagedExecution {
  const staged = Object.freeze({
    proposalId: init.proposalId,
    approvers: Object.freeze([...init.approvers]),
    transaction: init.transaction,
  });
  STAGED.add(staged);
  return staged;
}

/** Whether `value` came from `stagedExecution()` (a look-alike object does not count). */
export function isStagedExecution(value: unknown): value is StagedExecution {
  return typeof value === 'object' && value !== null && STAGED.has(value);
}

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
  /** Set by the proposal pipeline only: the approved proposal this call executes. */
  readonly staged?: StagedExecution;
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
  readonly staged?: StagedExecution;
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
    ...(init.staged ? { staged: init.staged } : {}),
  });
}
