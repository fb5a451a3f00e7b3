import { ownValue } from '@zmodu/core';
import type { ProposalContext } from './proposal.types';

export type RiskVerdict = { readonly verdict: 'approve' } | { readonly verdict: 'reject' | 'escalate'; readonly reason: string };

/** What a review sees: the action, the validated payload and the amount the application computed. */
export interface ReviewInput {
  readonly action: string;
  readonly payload: unknown;
  /** Computed by the action's amount function; null when the action declares none (and has no rules). */
  readonly amount: number | null;
}

/** A custom review (the port): approve, reject, or escalate to a human. */
export interface RiskReviewer {
  review(input: ReviewInput, ctx: ProposalContext): Promise<RiskVerdict> | RiskVerdict;
}

export interface RiskRules {
  /** Per action: escalate to a human from `escalateAt`, reject from `rejectAt` (inclusive). */
  readonly thresholds?: Readonly<Record<string, { readonly escalateAt?: number; readonly rejectAt?: number }>>;
  /** Per tenant: the largest amount one proposal may carry; more is rejected. '*' applies to tenants not listed. */
  readonly tenantLimits?: Readonly<Record<string, number>>;
  /** At most `max` proposals per `windowMs`, per user or per tenant; more are rejected. */
  readonly velocity?: { readonly max: number; readonly windowMs: number; readonly per: 'user' | 'tenant' };
}

/** Whether a limit or a threshold applies to `action` (and so an amount must be computed for it). */
export function rulesNeedAmount(rules: RiskRules, action: string): boolean {
  return Object.keys(rules.tenantLimits ?? {}).length > 0 || ownValue(rules.thresholds, action) !== undefined;
}

/**
 * The rule part of the risk review (velocity is counted by the pipeline, in the database). Limits
 * and thresholds are looked up by own keys only. An amount missing where a rule needs one rejects:
 * a rule is never skipped for want of a number.
 */
export function reviewByRules(
  rules: RiskRules,
  input: ReviewInput,
  ctx: Pick<ProposalContext, 'tenantId'>,
  recentCount: number,
): RiskVerdict {
  if (rules.velocity && recentCount >= rules.velocity.max)
    return {
      verdict: 'reject',
      reason: `velocity: at most ${rules.velocity.max} proposals per ${rules.velocity.windowMs} ms per ${rules.velocity.per}`,
    };
  const amount = input.amount;
  if (amount === null || !Number.isFinite(amount) || amount < 0) {
    if (rulesNeedAmount(rules, input.action))
      return { verdict: 'reject', reason: `the amount at stake of ${input.action} is unknown: its limits cannot be checked` };
    return { verdict: 'approve' };
  }
  const limit = ownValue(rules.tenantLimits, ctx.tenantId) ?? ownValue(rules.tenantLimits, '*');
  if (limit !== undefined && amount > limit) return { verdict: 'reject', reason: `amount ${amount} is over the tenant limit of ${limit}` };
  const t = ownValue(rules.thresholds, input.action);
  if (t?.rejectAt !== undefined && amount >= t.rejectAt)
    return { verdict: 'reject', reason: `amount ${amount} is at or over ${t.rejectAt} for ${input.action}` };
  if (t?.escalateAt !== undefined && amount >= t.escalateAt)
    return { verdict: 'escalate', reason: `amount ${amount} is at or over ${t.escalateAt} for ${input.action}: a human must approve` };
  return { verdict: 'approve' };
}
