import { createHash } from 'node:crypto';
import { canonicalJson } from '@zmodu/core';
import type { SkillContext } from '@zmodu/skills';

/**
 * The idempotency key of command.execute, stored with the event (its tenant is the event's tenant):
 * the caller's user, agent and run id. Another user (or agent) of the tenant who reuses a run id
 * neither replays nor blocks this one.
 */
export function commandKey(who: Pick<SkillContext, 'userId' | 'agent' | 'runId'>): string {
  return `command:${JSON.stringify([who.userId ?? null, who.agent ?? null, who.runId])}`;
}

/** The name of the per-key database lock of a command key (tenant included). */
export function commandLockName(tenantId: string | null, key: string): string {
  return JSON.stringify(['zmodu.command', tenantId, key]);
}

/** sha256 (hex) of a command's name and canonical arguments. */
export function commandArgsHash(name: string, args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson([name, args ?? {}]))
    .digest('hex');
}
