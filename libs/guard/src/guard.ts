import { ActionClass } from './action-class';
import { ALLOWED, DENIED, GuardDecision } from './guard-decision';
import { GuardPolicy } from './guard-policy';
import { GuardStats, GuardStatsSnapshot } from './guard-stats';
import { InvalidPolicyException } from './exceptions/invalid-policy.exception';
import { INVALID_COST_MESSAGE } from './guard.messages';

export interface GuardOptions {
  /** Share counters between guards (e.g. one per agent run, counted per agent). */
  readonly stats?: GuardStats;
}

/**
 * The fail-closed authority gate. `check` evaluates, in this fixed order:
 * the deny list, allow-list membership, the `allowExecute` switch for
 * `execute`-class calls, then the token budget. A denied call spends no budget.
 */
export class Guard {
  readonly policy: Readonly<Required<Omit<GuardPolicy, 'budget'>>> & { readonly budget?: number };
  readonly stats: GuardStats;
  private readonly allowSet: ReadonlySet<string>;
  private readonly denySet: ReadonlySet<string>;
  private readonly allowExecute: boolean;
  private readonly budget: number;
  private spentTokens = 0;

  constructor(given: GuardPolicy, options: GuardOptions = {}) {
    // Own properties only: a policy merged from JSON with a "__proto__" key must not lend allowExecute.
    const policy = ownPolicy(given);
    validatePolicy(policy);
    this.policy = Object.freeze({
      allow: Object.freeze([...policy.allow]),
      deny: Object.freeze([...(policy.deny ?? [])]),
      allowExecute: policy.allowExecute === true,
      ...(policy.budget === undefined ? {} : { budget: policy.budget }),
    });
    this.allowSet = new Set(policy.allow);
    this.denySet = new Set(policy.deny ?? []);
    this.allowExecute = policy.allowExecute === true;
    this.budget = policy.budget ?? Number.POSITIVE_INFINITY;
    this.stats = options.stats ?? new GuardStats();
  }

  /** Decide, count the decision and, when allowed, spend `cost` from the budget. */
  check(action: ActionClass, name: string, cost = 0): GuardDecision {
    const decision = this.evaluate(action, name, cost);
    this.commit(decision, cost);
    return decision;
  }

  /** Decide without counting or spending (for callers that add a check of their own before committing). */
  evaluate(action: ActionClass, name: string, cost = 0): GuardDecision {
    if (!(cost >= 0) || cost === Number.POSITIVE_INFINITY) throw new RangeError(INVALID_COST_MESSAGE(cost));
    if (this.denySet.has(name)) return DENIED.denied_explicitly;
    if (!this.allowSet.has(name)) return DENIED.denied_not_listed;
    if (action !== 'read' && action !== 'propose' && !this.allowExecute) return DENIED.denied_execute_class;
    if (this.spentTokens + cost > this.budget) return DENIED.denied_budget;
    return ALLOWED;
  }

  /** Count a decision from `evaluate` and spend its cost when it allowed the call. */
  commit(decision: GuardDecision, cost = 0): void {
    this.stats.count(decision.cause);
    if (decision.allowed) this.spentTokens += cost;
  }

  /** Spend tokens used outside a tool call (e.g. a model turn), so later calls see the budget shrink. */
  spend(tokens: number): void {
    if (!(tokens >= 0) || tokens === Number.POSITIVE_INFINITY) throw new RangeError(INVALID_COST_MESSAGE(tokens));
    this.spentTokens += tokens;
  }

  get spent(): number {
    return this.spentTokens;
  }

  get remainingBudget(): number {
    return Math.max(0, this.budget - this.spentTokens);
  }

  /** True when the policy can let nothing through by name: no allowed name survives the deny list, or a zero budget. */
  isInert(): boolean {
    if (this.budget <= 0) return true;
    for (const name of this.allowSet) if (!this.denySet.has(name)) return false;
    return true;
  }

  /** Whether a name passes the name axes (deny, then allow). The class axis is not consulted. */
  permitsName(name: string): boolean {
    return !this.denySet.has(name) && this.allowSet.has(name);
  }

  getStats(): GuardStatsSnapshot {
    return this.stats.snapshot();
  }
}

function validatePolicy(policy: GuardPolicy): void {
  if (policy === null || typeof policy !== 'object') throw new InvalidPolicyException('the policy is missing');
  if (!Array.isArray(policy.allow)) throw new InvalidPolicyException('`allow` must be an array of skill names');
  if (policy.deny !== undefined && !Array.isArray(policy.deny)) throw new InvalidPolicyException('`deny` must be an array of skill names');
  for (const name of [...policy.allow, ...(policy.deny ?? [])]) {
    if (typeof name !== 'string' || name.length === 0)
      throw new InvalidPolicyException(`every listed name must be a non-empty string (got ${JSON.stringify(name)})`);
  }
  if (policy.allowExecute !== undefined && typeof policy.allowExecute !== 'boolean')
    throw new InvalidPolicyException('`allowExecute` must be a boolean');
  if (policy.budget !== undefined && !(typeof policy.budget === 'number' && policy.budget >= 0))
    throw new InvalidPolicyException('`budget` must be a number >= 0 (tokens)');
}

/** The policy's own fields (allow, deny, allowExecute, budget): nothing read through a prototype. */
function ownPolicy(policy: GuardPolicy): GuardPolicy {
  if (policy === null || typeof policy !== 'object') return policy;
  const own = <K extends keyof GuardPolicy>(key: K): GuardPolicy[K] | undefined => (Object.hasOwn(policy, key) ? policy[key] : undefined);
  return { allow: own('allow') as string[], deny: own('deny'), allowExecute: own('allowExecute'), budget: own('budget') };
}
