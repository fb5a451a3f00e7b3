import { ActionClass } from './action-class';
import { Guard } from './guard';
import { GuardPolicy } from './guard-policy';

/** Anything that can list its tools with their action class (a SkillRegistry does). */
export interface ToolCatalog {
  list(): ReadonlyArray<{ readonly name: string; readonly action: ActionClass }>;
}

export interface PolicyHealth {
  /** The policy lets no name through (empty allow list, all allowed names denied, or a zero budget). */
  readonly inert: boolean;
  /** Names on the allow or deny list that the catalog does not know. */
  readonly unknownTools: string[];
  /** Allowed `execute`-class names that the class gate still refuses because `allowExecute` is false. */
  readonly classDeniedTools: string[];
  /** True when `classDeniedTools` is not empty: the allow list promises what the class gate refuses. */
  readonly hasClassBlindSpot: boolean;
  /** Names that can actually pass this policy (known, allowed, not denied, not refused by class). */
  readonly effectiveTools: string[];
  /**
   * Admin skills (`admin.*`) that a filter would include but the allow list does not name: an allow-list entry written
   * as a pattern (`*`, `admin.*`, `admin.cache.?lear`: the guard matches names exactly, so it lets none of them
   * through, but the policy reads as if it meant to), or the agent's `skills` filter function
   * (`auditPolicy(..., { offeredByFilter })`). An admin skill is reachable only when the allow list names it exactly.
   */
  readonly adminByFilter: string[];
}

/** Admin skills are named under this prefix; an allow list reaches one only by naming it exactly. */
export const ADMIN_SKILL_PREFIX = 'admin.';

/** Whether `name` is an admin skill (`admin.*`). */
export const isAdminSkill = (name: string): boolean => name.startsWith(ADMIN_SKILL_PREFIX);

/** What auditPolicy may be told beside the policy. */
export interface AuditPolicyOptions {
  /** The names an agent's `skills` filter function offers the model (the filter applied to the catalog). */
  readonly offeredByFilter?: Iterable<string>;
}

/** An allow-list entry that reads as a pattern: a glob with `*` or `?` (the guard itself never matches patterns). */
function patternOf(entry: string): RegExp | null {
  if (!/[*?]/.test(entry)) return null;
  const source = [...entry].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`);
}

/** Report a policy that is inert, names unknown tools, or lists `execute` tools while `allowExecute` is false. */
export function auditPolicy(catalog: ToolCatalog, policy: GuardPolicy | Guard, options: AuditPolicyOptions = {}): PolicyHealth {
  const guard = policy instanceof Guard ? policy : new Guard(policy);
  const tools = new Map<string, ActionClass>();
  for (const tool of catalog.list()) tools.set(tool.name, tool.action);
  const listed = [...new Set([...guard.policy.allow, ...guard.policy.deny])];
  const unknownTools = listed.filter((name) => !tools.has(name)).sort();
  const classDeniedTools: string[] = [];
  const effectiveTools: string[] = [];
  for (const name of new Set(guard.policy.allow)) {
    const action = tools.get(name);
    if (action === undefined || !guard.permitsName(name)) continue;
    if (action === 'execute' && !guard.policy.allowExecute) classDeniedTools.push(name);
    else effectiveTools.push(name);
  }
  classDeniedTools.sort();
  effectiveTools.sort();
  return {
    inert: guard.isInert(),
    unknownTools,
    classDeniedTools,
    hasClassBlindSpot: classDeniedTools.length > 0,
    effectiveTools,
    adminByFilter: adminByFilter([...tools.keys()], guard.policy.allow, options.offeredByFilter),
  };
}

/** The admin skills of the catalog that a pattern on the allow list, or the offered-by-filter names, include, less those named. */
function adminByFilter(names: readonly string[], allow: readonly string[], offered: Iterable<string> | undefined): string[] {
  const patterns = allow.map(patternOf).filter((p): p is RegExp => p !== null);
  const found = new Set<string>();
  for (const name of names) if (isAdminSkill(name) && patterns.some((p) => p.test(name))) found.add(name);
  for (const name of offered ?? []) if (typeof name === 'string' && isAdminSkill(name) && names.includes(name)) found.add(name);
  // Named exactly as well: allowed on purpose.
  for (const name of allow) found.delete(name);
  return [...found].sort();
}

/** True when a report says something an operator should look at. */
export function policyNeedsAttention(health: PolicyHealth): boolean {
  return health.inert || health.hasClassBlindSpot || health.unknownTools.length > 0 || health.adminByFilter.length > 0;
}
