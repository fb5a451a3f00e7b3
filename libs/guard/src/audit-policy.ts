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
}

/** Report a policy that is inert, names unknown tools, or lists `execute` tools while `allowExecute` is false. */
export function auditPolicy(catalog: ToolCatalog, policy: GuardPolicy | Guard): PolicyHealth {
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
  };
}

/** True when a report says something an operator should look at. */
export function policyNeedsAttention(health: PolicyHealth): boolean {
  return health.inert || health.hasClassBlindSpot || health.unknownTools.length > 0;
}
