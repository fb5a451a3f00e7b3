import type { GuardPolicy } from '@zmodu/guard';
import type { ApprovalStep, ProposalExecutor } from './proposal.types';
import type { RiskReviewer, RiskRules } from './risk-review';

export interface ApprovalChainRule {
  /** The rule applies from this amount on (inclusive). */
  readonly minAmount: number;
  readonly steps: readonly ApprovalStep[];
}

export interface ApprovalOptions {
  /** Per action: the steps a proposal needs, by amount. Every rule whose minAmount is reached adds its steps, in order. */
  readonly chains?: Readonly<Record<string, readonly ApprovalChainRule[]>>;
  /** Steps of an escalated proposal no chain rule covers. Default one step needing 'approval:decide'. */
  readonly defaultSteps?: readonly ApprovalStep[];
  /** A pending proposal expires after this long (ms). Default 24 h. */
  readonly expiresInMs?: number;
}

export class PipelineModuleOptions {
  /** The executor of each action; an action without one cannot be proposed. */
  executors: Record<string, ProposalExecutor> = {};
  /** The pipeline's guard: which actions may be proposed and executed. Default: every executor action, execute allowed. */
  policy?: GuardPolicy;
  risk?: RiskRules = {};
  /** Custom reviews, run after the rules (the first reject or escalate wins). */
  reviewers?: RiskReviewer[] = [];
  approval?: ApprovalOptions = {};
  /** How often approved proposals left by a dead process are looked for and executed (ms). Default 30000; 0: only at boot. */
  recoveryIntervalMs?: number = 30_000;
  /** Register the approval.submit and approval.request skills. Default true. */
  registerSkills?: boolean = true;
}

export const DEFAULT_STEPS: readonly ApprovalStep[] = [{ name: 'approver', permission: 'approval:decide' }];
export const DEFAULT_EXPIRY_MS = 24 * 60 * 60 * 1000;
