import type { EntityManager } from 'typeorm';

/** What a caller proposes: an action name (e.g. 'order.submit'), its payload, and an amount for risk rules. */
export interface ProposalInput {
  readonly action: string;
  readonly payload: unknown;
  readonly amount?: number;
}

/** Who proposes. Tenant and user are required: every proposal belongs to one tenant and one proposer. */
export interface ProposalContext {
  readonly tenantId: string;
  readonly userId: string;
  readonly runId?: string;
}

export type ProposalVerdict =
  | 'propose_refused'
  | 'risk_rejected'
  | 'needs_human'
  | 'execute_not_permitted'
  | 'executor_failed'
  | 'executed';

export type ProposalStatus = 'refused' | 'rejected' | 'pending' | 'approved' | 'executed' | 'failed' | 'expired';

export interface ApprovalStep {
  /** A label for people, e.g. 'desk lead'. */
  readonly name: string;
  /** The permission the approver of this step must hold. */
  readonly permission: string;
}

export interface DecisionRecord {
  readonly step: number;
  readonly decidedBy: string;
  readonly decision: 'approve' | 'reject';
  readonly reason: string;
  readonly at: Date;
}

export interface ProposalRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly action: string;
  readonly payload: unknown;
  readonly amount: number | null;
  readonly proposer: string;
  readonly status: ProposalStatus;
  readonly verdict: ProposalVerdict;
  readonly reason: string | null;
  readonly steps: ApprovalStep[];
  readonly approvals: number;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly executedAt: Date | null;
  readonly result: unknown;
  readonly runId: string | null;
  readonly decisions: DecisionRecord[];
}

/** The outcome of `submit` or of a human decision: a verdict, its reason and the proposal id. */
export interface PipelineOutcome {
  readonly verdict: ProposalVerdict | 'rejected_by_human' | 'approved_pending_next_step';
  readonly proposalId: string;
  readonly status: ProposalStatus;
  readonly reason: string | null;
  /** The executor's value when executed. */
  readonly result?: unknown;
  /** For needs_human: the steps still to approve. */
  readonly waitingFor?: ApprovalStep[];
}

export interface ExecutorContext {
  /** The transaction that marks the proposal executed: write through it and the effect commits exactly once with it. */
  readonly manager: EntityManager;
  /** The proposal id: key any external side effect on it. */
  readonly idempotencyKey: string;
}

/** Runs an approved proposal. Called once per proposal (its writes through `manager` commit with the status change). */
export type ProposalExecutor = (proposal: ProposalRecord, ctx: ExecutorContext) => Promise<unknown> | unknown;
