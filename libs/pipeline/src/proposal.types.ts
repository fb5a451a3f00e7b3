/** What a caller proposes: a staged action (a registered staged `execute` skill) and its payload (that skill's arguments). */
export interface ProposalInput {
  readonly action: string;
  readonly payload: unknown;
}

/**
 * Who proposes. Tenant and user are required: every proposal belongs to one tenant and one
 * proposer. `permissions` are captured with the proposal: the staged skill runs with them.
 */
export interface ProposalContext {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
  readonly runId?: string;
  /** The agent that proposed, when one did (kept with the proposal, shown to approvers). */
  readonly agent?: string;
  /**
   * Whether the proposer's own policy lets it execute the action (spec §3: guard.check(.execute)).
   * false: the proposal goes to the human queue (`execute_not_permitted`) even when the risk review
   * would let it through. approval.submit sets it from the calling agent's guard. Default true.
   */
  readonly mayExecute?: boolean;
}

export type ProposalVerdict =
  'propose_refused' | 'risk_rejected' | 'needs_human' | 'execute_not_permitted' | 'executor_failed' | 'executed';

export type ProposalStatus = 'refused' | 'rejected' | 'pending' | 'approved' | 'executed' | 'failed' | 'expired';

export interface ApprovalStep {
  /** A label for people, e.g. 'desk lead'. */
  readonly name: string;
  /** The permission the approver of this step must hold. */
  readonly permission: string;
}

/** An approver's edit: the payload and amount before and after it. */
export interface ProposalEdit {
  readonly before: { readonly payload: unknown; readonly amount: number | null };
  readonly after: { readonly payload: unknown; readonly amount: number | null };
}

export interface DecisionRecord {
  readonly step: number;
  readonly decidedBy: string;
  readonly decision: 'approve' | 'reject';
  readonly reason: string;
  readonly at: Date;
  /** The version of the proposal the decision was made on (what the approver read). */
  readonly version: number;
  /** Present when the approver approved with an edited payload. */
  readonly edit: ProposalEdit | null;
}

export interface ProposalRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly action: string;
  readonly payload: unknown;
  /** The amount at stake, computed by the application (never taken from the proposer). */
  readonly amount: number | null;
  readonly proposer: string;
  /** The proposer's permissions, captured at submit: the staged skill runs with them. */
  readonly permissions: readonly string[];
  readonly agent: string | null;
  readonly status: ProposalStatus;
  readonly verdict: ProposalVerdict;
  readonly reason: string | null;
  readonly steps: ApprovalStep[];
  readonly approvals: number;
  /** Increases with every decision and edit: a decision names the version it was made on. */
  readonly version: number;
  /** The step that waits for a decision now (null unless pending). */
  readonly waitingStep: (ApprovalStep & { readonly index: number }) | null;
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
  /** null when nothing was stored (a proposal refused before it was written). */
  readonly proposalId: string | null;
  readonly status: ProposalStatus;
  readonly reason: string | null;
  /** For propose_refused: the payload field that is wrong, when one is. */
  readonly field?: string;
  /** The staged skill's value when executed. */
  readonly result?: unknown;
  /** For needs_human: the steps still to approve. */
  readonly waitingFor?: ApprovalStep[];
  /** The version a decision must name next (pending proposals). */
  readonly version?: number;
  readonly amount?: number | null;
  /**
   * True when the run (the same run id, retried after its process died) had already proposed this action with this
   * payload: the answer is that stored proposal as it is now, and nothing was written or executed again.
   */
  readonly replayed?: boolean;
}

/** A human decision: it binds to the version and the step the approver read. */
export interface DecisionInput {
  readonly decision: 'approve' | 'reject';
  readonly reason: string;
  /** The `version` of the proposal as read. */
  readonly version: number;
  /** The index of the step being decided (`waitingStep.index` as read). */
  readonly step: number;
  /** Approve with an edited payload: validated, re-priced and re-reviewed before it applies. */
  readonly payload?: unknown;
}
