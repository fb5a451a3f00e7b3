import { checkStoreChoice, ownOptions } from '@zmodu/core';
import type { GuardPolicy } from '@zmodu/guard';
import { InvalidPipelineOptionsException } from './exceptions/invalid-pipeline-options.exception';
import {
  ACTIONS_SHAPE_MESSAGE,
  APPROVAL_STEP_MESSAGE,
  CHAIN_RULE_MESSAGE,
  CHAINS_SHAPE_MESSAGE,
  DEFAULT_STEPS_MESSAGE,
  EXECUTORS_GONE_MESSAGE,
} from './pipeline.messages';
import type { ApprovalStep } from './proposal.types';
import type { ProposalStore } from './proposal.store';
import type { RiskReviewer, RiskRules } from './risk-review';

export interface ApprovalChainRule {
  /** The rule applies from this amount on (inclusive). */
  readonly minAmount: number;
  readonly steps: readonly ApprovalStep[];
}

export interface ApprovalOptions {
  /**
   * Per action: the steps a proposal needs, by amount. Every rule whose minAmount is reached adds its steps, in order. A
   * chain governs every human approval of its action, whatever the proposal waits for (a risk escalation, a proposer
   * that may not execute it).
   */
  readonly chains?: Readonly<Record<string, readonly ApprovalChainRule[]>>;
  /**
   * Steps of a proposal that waits for a human and that no chain rule covers. Default one step needing
   * 'approval:decide' (the boot warns of each action that falls back to it unless this is given).
   */
  readonly defaultSteps?: readonly ApprovalStep[];
  /** A pending proposal expires after this long (ms). Default 24 h. */
  readonly expiresInMs?: number;
}

/** What an amount function gets besides the validated payload. */
export interface AmountContext {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
  /** Read the application's data (prices, balances): rows of one statement. */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/**
 * The amount at stake of a proposal, computed by the application from the validated payload and
 * its own data, never taken from the proposer. A finite number >= 0; throw when it cannot be
 * computed (the proposal is then refused, never waved through).
 */
export type AmountFunction = (payload: Record<string, unknown>, ctx: AmountContext) => number | Promise<number>;

export interface StagedActionOptions {
  /** Required when the action has thresholds, limits or approval chains. */
  readonly amount?: AmountFunction;
}

export class PipelineModuleOptions {
  /**
   * The staged actions the pipeline executes: each is a registered skill declared
   * `@Skill({ action: 'execute', staged: true, ... })`, with how its amount is computed.
   */
  actions: Record<string, StagedActionOptions> = {};
  /** What approval.submit may propose (a model can name nothing else). Default none. */
  proposable?: string[] = [];
  /** The pipeline's guard: which actions may be proposed and executed. Default: every action, execute allowed. */
  policy?: GuardPolicy;
  risk?: RiskRules = {};
  /** Custom reviews, run after the rules (the first reject or escalate wins). */
  reviewers?: RiskReviewer[] = [];
  approval?: ApprovalOptions = {};
  /** How often approved proposals left by a dead process are looked for and executed (ms). Default 30000; 0: only at boot. */
  recoveryIntervalMs?: number = 30_000;
  /** Register approval.submit, approval.request and the staged approval.record. Default true. */
  registerSkills?: boolean = true;
  /** The agent name staged executions are audited and metered under. Default 'pipeline'. */
  agent?: string = 'pipeline';
  /**
   * Where proposals live: 'typeorm' (default: a TypeOrmProposalStore on the app's DataSource) or a ProposalStore of
   * yours (it must pass proposalStoreContract). No 'memory': a staged action's effect and its 'executed' mark commit in
   * one transaction of the database (for tests, the embedded database of @zmodu/db needs no server).
   */
  store?: 'typeorm' | ProposalStore = 'typeorm';
}

export const DEFAULT_STEPS: readonly ApprovalStep[] = [{ name: 'approver', permission: 'approval:decide' }];
export const DEFAULT_EXPIRY_MS = 24 * 60 * 60 * 1000;
/** The staged skill behind approval.request: recording the approval is its whole effect. */
export const APPROVAL_RECORD_ACTION = 'approval.record';

/** What PipelineModule tells the store resolver of @zmodu/core about its `store`. */
export const PIPELINE_STORE_CHOICE = {
  option: 'PipelineModule.forRoot({ store })',
  keeps: 'the proposals and their decisions',
  methods: [
    'transaction',
    'insert',
    'lockVelocity',
    'countRecent',
    'get',
    'list',
    'expire',
    'decide',
    'claimApproved',
    'markExecuted',
    'markFailed',
    'approvedIds',
  ],
  noMemory:
    "a staged action's effect and the proposal's 'executed' mark commit in one database transaction; use 'typeorm' (the embedded database of @zmodu/db needs no server) or a ProposalStore of your own",
  invalid: (problem: string) => new InvalidPipelineOptionsException(`PipelineModule.forRoot({ store }): ${problem}`),
} as const;

/** The approval options after the defaults are merged. */
export type ResolvedApprovalOptions = ApprovalOptions & Required<Pick<ApprovalOptions, 'defaultSteps' | 'expiresInMs'>>;

/** The options after the defaults are merged: what the pipeline's parts get (through the internal PIPELINE_OPTIONS). */
export type ResolvedPipelineOptions = Omit<Required<PipelineModuleOptions>, 'policy' | 'approval'> &
  Pick<PipelineModuleOptions, 'policy'> & { readonly approval: ResolvedApprovalOptions };

/** Merge the given options over the defaults, once (a field given as `undefined` keeps its default); refuse options that cannot work. */
export function resolvePipelineOptions(raw: Partial<PipelineModuleOptions> | undefined): ResolvedPipelineOptions {
  if ('executors' in (raw ?? {})) throw new InvalidPipelineOptionsException(EXECUTORS_GONE_MESSAGE());
  const given = ownOptions(raw);
  const options = Object.assign(new PipelineModuleOptions(), given);
  if (!options.actions || typeof options.actions !== 'object') throw new InvalidPipelineOptionsException(ACTIONS_SHAPE_MESSAGE());
  checkStoreChoice({ ...PIPELINE_STORE_CHOICE, choice: options.store });
  const approval = options.approval ?? {};
  checkApproval(approval);
  return {
    ...(options as ResolvedPipelineOptions),
    approval: { ...approval, defaultSteps: approval.defaultSteps ?? DEFAULT_STEPS, expiresInMs: approval.expiresInMs ?? DEFAULT_EXPIRY_MS },
  };
}

/** Every chain rule and step well formed (a step without a permission would be decided by whoever the default lets). */
function checkApproval(approval: ApprovalOptions): void {
  const { chains, defaultSteps } = approval;
  if (chains !== undefined) {
    if (!chains || typeof chains !== 'object' || Array.isArray(chains)) throw new InvalidPipelineOptionsException(CHAINS_SHAPE_MESSAGE());
    for (const [action, rules] of Object.entries(chains)) {
      if (!Array.isArray(rules)) throw new InvalidPipelineOptionsException(CHAINS_SHAPE_MESSAGE());
      rules.forEach((rule: ApprovalChainRule, i) => {
        const ok = rule && typeof rule.minAmount === 'number' && Number.isFinite(rule.minAmount) && rule.minAmount >= 0;
        if (!ok || !Array.isArray(rule.steps)) throw new InvalidPipelineOptionsException(CHAIN_RULE_MESSAGE(action, i));
        checkSteps(rule.steps, `approval.chains['${action}'][${i}]`);
      });
    }
  }
  if (defaultSteps !== undefined) {
    if (!Array.isArray(defaultSteps) || defaultSteps.length === 0) throw new InvalidPipelineOptionsException(DEFAULT_STEPS_MESSAGE());
    checkSteps(defaultSteps, 'approval.defaultSteps');
  }
}

function checkSteps(steps: readonly ApprovalStep[], where: string): void {
  steps.forEach((step, i) => {
    const text = (v: unknown) => typeof v === 'string' && v.trim() !== '' && v.length <= 200;
    if (!step || typeof step !== 'object' || !text(step.name) || !text(step.permission))
      throw new InvalidPipelineOptionsException(APPROVAL_STEP_MESSAGE(where, i));
  });
}
