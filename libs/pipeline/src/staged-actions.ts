import { Logger } from '@nestjs/common';
import { ownValue } from '@zmodu/core';
import { describeErrors, jsonDepth, SkillTransaction } from '@zmodu/skills/internal';
import { SkillRegistry } from '@zmodu/skills';
import { AmountSourceMissingException } from './exceptions/amount-source-missing.exception';
import { InvalidPipelineOptionsException } from './exceptions/invalid-pipeline-options.exception';
import { PipelineCannotStartException } from './exceptions/pipeline-cannot-start.exception';
import { AMOUNT_NOT_A_FUNCTION_MESSAGE, CHAIN_GAP_WARNING, NO_CHAIN_WARNING } from './pipeline.messages';
import { AmountFunction, APPROVAL_RECORD_ACTION, DEFAULT_STEPS, ResolvedPipelineOptions } from './pipeline.options';
import { ApprovalStep, ProposalContext } from './proposal.types';
import { reviewByRules, RiskVerdict, rulesNeedAmount } from './risk-review';

export type Prepared =
  | { readonly ok: true; readonly payload: Record<string, unknown>; readonly amount: number | null }
  | { readonly ok: false; readonly reason: string; readonly field?: string };

/** The built-in amount of approval.record: the amount the request asks approval for is what the approver approves. */
const approvalRecordAmount: AmountFunction = (payload) => Number(payload.amount);

/**
 * What the pipeline knows of its staged actions: each one's skill (schema, permission), how its
 * amount is computed, its approval chain, and the rule part of the risk review.
 */
export class StagedActions {
  private readonly logger = new Logger('ProposalPipeline');
  private readonly amounts = new Map<string, AmountFunction>();
  /** Every action the pipeline executes (its options' actions, and approval.record with the skills). */
  private readonly actionNames: ReadonlySet<string>;

  constructor(
    private readonly options: ResolvedPipelineOptions,
    private readonly registry: SkillRegistry,
    private readonly read: SkillTransaction | null,
  ) {
    for (const [action, spec] of Object.entries(options.actions)) {
      if (spec?.amount !== undefined && typeof spec.amount !== 'function')
        throw new InvalidPipelineOptionsException(AMOUNT_NOT_A_FUNCTION_MESSAGE(action));
      if (spec?.amount) this.amounts.set(action, spec.amount);
    }
    if (options.registerSkills && !this.amounts.has(APPROVAL_RECORD_ACTION)) this.amounts.set(APPROVAL_RECORD_ACTION, approvalRecordAmount);
    const names = new Set(Object.keys(options.actions));
    if (options.registerSkills) names.add(APPROVAL_RECORD_ACTION);
    this.actionNames = names;
  }

  /** Every action the pipeline executes. */
  names(): string[] {
    return [...this.actionNames];
  }

  has(action: string): boolean {
    return this.actionNames.has(action);
  }

  /** Boot check: every action is a staged skill, every rule and proposable names a known action, every rule has its amount. */
  check(): void {
    const names = this.names();
    const problems: string[] = [];
    for (const action of names) {
      const skill = this.registry.get(action);
      if (!skill)
        problems.push(
          `'${action}' is not a registered skill: declare @Skill({ name: '${action}', action: 'execute', staged: true, ... }) on a provider`,
        );
      else if (!skill.staged)
        problems.push(`the skill '${action}' is not staged: add staged: true to its @Skill(...) so that only the pipeline can run it`);
      const chains = ownValue(this.options.approval.chains, action);
      if (!this.amounts.has(action) && (rulesNeedAmount(this.options.risk, action) || (chains?.length ?? 0) > 0))
        problems.push(
          `'${action}' has ${rulesNeedAmount(this.options.risk, action) ? 'a limit or threshold' : 'an approval chain'} but no amount function: add actions: { '${action}': { amount: (payload, ctx) => ... } } (the amount at stake, computed from the payload and your data)`,
        );
    }
    for (const [kind, keys] of [
      ['risk.thresholds', Object.keys(this.options.risk.thresholds ?? {})],
      ['approval.chains', Object.keys(this.options.approval.chains ?? {})],
      ['proposable', this.options.proposable],
    ] as const)
      for (const key of keys)
        if (!names.includes(key))
          problems.push(`${kind} names '${key}', which is not one of the pipeline's actions: add it to actions (or fix the name)`);
    if (problems.length) throw new PipelineCannotStartException(problems);
    for (const skill of this.registry.definitions())
      if (skill.staged && !names.includes(skill.name))
        this.logger.warn(`the staged skill '${skill.name}' is not one of the pipeline's actions: nothing can run it`);
    for (const warning of this.approvalWarnings()) this.logger.warn(warning);
  }

  /**
   * Who approves, where the options do not say: every action can wait for a human (a risk escalation, or a proposer that
   * may not execute it: an agent without allowExecute, approval.request always), so each action without a chain, or
   * whose chain leaves small amounts uncovered, falls back to the default steps. Said at boot unless
   * approval.defaultSteps is given (then the fallback is the application's choice).
   */
  approvalWarnings(): string[] {
    const steps = this.options.approval.defaultSteps;
    if (steps !== DEFAULT_STEPS) return [];
    const warnings: string[] = [];
    const unchained: string[] = [];
    for (const action of this.names()) {
      const rules = (ownValue(this.options.approval.chains, action) ?? []).filter((r) => r.steps.length > 0);
      if (rules.length === 0) unchained.push(action);
      else {
        const from = Math.min(...rules.map((r) => r.minAmount));
        if (from > 0) warnings.push(CHAIN_GAP_WARNING(action, from, steps));
      }
    }
    if (unchained.length) warnings.unshift(NO_CHAIN_WARNING(unchained, steps));
    return warnings;
  }

  /** Validate the payload against the action's schema and compute its amount. Nothing here trusts the proposer with a number. */
  async prepare(ctx: ProposalContext, action: string, payload: unknown): Promise<Prepared> {
    const skill = this.has(action) ? this.registry.get(action) : undefined;
    if (!skill || !skill.staged) return { ok: false, reason: `'${action}' is not an action the pipeline executes` };
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
      return { ok: false, reason: 'payload must be a JSON object', field: 'payload' };
    // Before anything walks it (the checks below, the schema, the JSON written): a bounded depth, checked without recursion.
    if (jsonDepth(payload, MAX_PAYLOAD_DEPTH + 1) > MAX_PAYLOAD_DEPTH)
      return { ok: false, reason: `payload nests deeper than ${MAX_PAYLOAD_DEPTH} levels`, field: 'payload' };
    const unstorable = unstorableText(payload);
    if (unstorable)
      return {
        ok: false,
        reason: `payload${unstorable} holds a NUL character or a lone surrogate, which cannot be stored`,
        field: `payload${unstorable.replace(/\./g, '/')}`,
      };
    if (!skill.validate(payload)) {
      const [problem] = describeErrors(skill.validate.errors);
      return {
        ok: false,
        reason: `payload${problem.path === '/' ? '' : problem.path.replace(/\//g, '.')} ${problem.message}`,
        field: `payload${problem.path === '/' ? '' : problem.path}`,
      };
    }
    if (skill.requiredPermission !== undefined && !ctx.permissions.includes(skill.requiredPermission))
      return { ok: false, reason: `missing_permission: proposing ${action} needs the permission ${skill.requiredPermission}` };
    const fn = this.amounts.get(action);
    if (!fn) return { ok: true, payload: payload as Record<string, unknown>, amount: null };
    let amount: number;
    try {
      if (!this.read) throw new AmountSourceMissingException();
      const read = this.read;
      amount = await fn(payload as Record<string, unknown>, {
        tenantId: ctx.tenantId,
        userId: ctx.userId,
        permissions: ctx.permissions,
        query: (sql, params) => read.query(sql, params),
      });
    } catch (err) {
      // A database that cannot be reached is an outage (the caller's 503 with Retry-After), not a refusal of the payload:
      // if the database does not answer now either, its error is thrown (nothing was written).
      if (this.read) await this.read.query('SELECT 1');
      return {
        ok: false,
        reason: `the amount at stake of ${action} could not be computed: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0)
      return {
        ok: false,
        reason: `the amount at stake of ${action} could not be computed (the amount function answered ${String(amount)})`,
      };
    return { ok: true, payload: payload as Record<string, unknown>, amount };
  }

  /** Rules (but velocity), then the custom reviewers; the first reject or escalate wins. */
  async review(ctx: ProposalContext, action: string, payload: unknown, amount: number | null): Promise<RiskVerdict> {
    let risk = reviewByRules({ ...this.options.risk, velocity: undefined }, { action, payload, amount }, ctx, 0);
    for (const reviewer of this.options.reviewers) {
      if (risk.verdict !== 'approve') break;
      risk = await reviewer.review({ action, payload, amount }, ctx);
    }
    return risk;
  }

  /**
   * The approval steps for an amount: every chain rule it reaches, in order; the default steps when none. The one place
   * that says who approves: every proposal that waits for a human (escalated, or its execution refused) and every edit's
   * restarted chain takes its steps here.
   */
  stepsFor(action: string, amount: number | null): ApprovalStep[] {
    const rules = ownValue(this.options.approval.chains, action) ?? [];
    const steps: ApprovalStep[] = [];
    for (const rule of [...rules].sort((a, b) => a.minAmount - b.minAmount))
      if ((amount ?? Number.POSITIVE_INFINITY) >= rule.minAmount) steps.push(...rule.steps);
    return steps.length ? steps : [...this.options.approval.defaultSteps];
  }

  /** The action's JSON Schema (its staged skill's parameters) and description; null for an action the pipeline does not execute. */
  schemaOf(action: string): { action: string; description: string; schema: Record<string, unknown> } | null {
    const skill = this.has(action) ? this.registry.get(action) : undefined;
    if (!skill || !skill.staged) return null;
    return {
      action,
      description: skill.description,
      schema: structuredClone((skill.parameters ?? { type: 'object', properties: {} }) as Record<string, unknown>),
    };
  }
}

/** How deep a payload may nest (objects and arrays): deeper is refused before anything walks it recursively. */
const MAX_PAYLOAD_DEPTH = 64;

/** The path of the first string (value or key) PostgreSQL's jsonb cannot hold: a NUL, or a lone UTF-16 surrogate. */
function unstorableText(value: unknown, path = ''): string | null {
  const bad = (t: string) => t.includes('\u0000') || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(t);
  if (typeof value === 'string') return bad(value) ? path || '.' : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value)) {
    const at = `${path}.${Array.isArray(value) ? k : k}`;
    if (bad(k)) return at;
    const found = unstorableText(v, at);
    if (found) return found;
  }
  return null;
}
