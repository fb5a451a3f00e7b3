import { createHash } from 'node:crypto';
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

/** JSON with the keys of every object sorted: the same arguments in any key order give the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    // A null-prototype object: a key named __proto__ is a key here, not a prototype to set.
    const out = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** sha256 (hex) of a command's name and canonical arguments. */
export function commandArgsHash(name: string, args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson([name, args ?? {}]))
    .digest('hex');
}
