import type { SkillTransaction } from '@zmodu/skills/internal';
import type { ApprovalStep, ProposalEdit, ProposalRecord, ProposalStatus, ProposalVerdict } from './proposal.types';

/** A proposal as it is first written. */
export interface NewProposal {
  readonly id: string;
  readonly tenantId: string;
  readonly action: string;
  readonly payload: unknown;
  readonly amount: number | null;
  readonly proposer: string;
  readonly permissions: readonly string[];
  readonly agent: string | null;
  readonly runId: string | null;
  readonly status: Extract<ProposalStatus, 'rejected' | 'pending' | 'approved' | 'executed' | 'failed'>;
  readonly verdict: ProposalVerdict;
  readonly reason: string | null;
  readonly steps: readonly ApprovalStep[];
  /** Pending proposals expire then. */
  readonly expiresAt: Date | null;
  /** For status 'executed': the staged skill's value. */
  readonly result?: unknown;
}

/** One human decision, applied only if the proposal is still exactly as the approver read it. */
export interface StoredDecision {
  readonly tenantId: string;
  readonly id: string;
  readonly decidedBy: string;
  /** The approver's permissions: the waiting step's permission must be among them. */
  readonly permissions: readonly string[];
  readonly decision: 'approve' | 'reject';
  readonly reason: string;
  /** Applies only at this version and this waiting step. */
  readonly version: number;
  readonly step: number;
  /** The permission of a step that names none. */
  readonly defaultPermission: string;
  /**
   * An approval with an edited payload (already validated and reviewed): a counter-proposal. The
   * payload, amount and steps are replaced, the approvals counted so far start again from none
   * (they approved another payload), and the editor, who has now decided, cannot sign again: other
   * people sign the whole chain of the payload that will run.
   */
  readonly edit?: ProposalEdit & { readonly steps: readonly ApprovalStep[] };
  /**
   * Steps the action's chain requires today that the proposal's steps (at `version`) lack: the chain was tightened in the
   * configuration after the proposal was made. Appended to its steps, after those signed already; never with an edit
   * (an edit takes the whole chain of today).
   */
  readonly addSteps?: readonly ApprovalStep[];
}

export type DecisionWrite =
  | { readonly applied: true; readonly status: 'pending' | 'approved' | 'rejected'; readonly version: number }
  /** Nothing written: the proposal is not (or no longer) as read, or the caller may not decide it. */
  | { readonly applied: false; readonly alreadyDecided: boolean };

export interface ProposalPageQuery {
  readonly status?: ProposalStatus;
  readonly page: number;
  readonly limit: number;
}

/**
 * Where proposals and decisions live (docs/architecture.md, stores are ports). Every read and write is scoped to one tenant
 * where a caller names an id; claims and decisions are atomic in the store (a conditional write,
 * or a row lock), never a read followed by a write in application code. `transaction` hands the
 * work a `SkillTransaction` that the staged skill writes through, so the effect and the
 * 'executed' mark commit together. Run `proposalStoreContract` (@zmodu/pipeline/testing) against
 * an implementation of your own.
 */
export interface ProposalStore {
  transaction<T>(work: (tx: SkillTransaction) => Promise<T>): Promise<T>;
  insert(p: NewProposal, tx?: SkillTransaction): Promise<void>;
  /** Serialize velocity counting for one key until the transaction ends. */
  lockVelocity(tx: SkillTransaction, key: string): Promise<void>;
  /** Proposals created since `since` by this tenant (and this proposer when given). */
  countRecent(tx: SkillTransaction, tenantId: string, proposer: string | null, since: Date): Promise<number>;
  /** One proposal of the tenant with its decisions; null for another tenant's or an unknown id. */
  get(tenantId: string, id: string): Promise<ProposalRecord | null>;
  list(tenantId: string, query: ProposalPageQuery): Promise<{ items: ProposalRecord[]; total: number }>;
  /** Mark the tenant's pending proposals past their expiry as expired; returns how many. */
  /**
   * With `now`: those of the tenant's proposals named there that are still pending are expired too, whatever their
   * time (a run that waited on them stopped waiting: no human may decide them after). One conditional write: a decision
   * that lands first wins, and one that comes after finds the proposal expired.
   */
  expire(tenantId: string, now?: readonly string[]): Promise<number>;
  decide(d: StoredDecision): Promise<DecisionWrite>;
  /** Lock an approved proposal for execution in `tx` (skipping one another transaction holds); null if none. */
  claimApproved(tx: SkillTransaction, id: string): Promise<ProposalRecord | null>;
  markExecuted(tx: SkillTransaction, id: string, result: unknown): Promise<void>;
  /** Settle an approved proposal as failed; false when it is no longer approved. */
  markFailed(id: string, reason: string): Promise<boolean>;
  /** Ids of approved proposals, oldest first (for recovery). */
  approvedIds(limit: number): Promise<string[]>;
  /**
   * A run's earlier proposal (the AgentWorker starts a run again, under its run id, when its process died): lock the
   * key (tenant, run id, action) until `tx` ends, then answer the proposal of that run by the same proposer and agent
   * with that action and an equal payload (JSON equality, keys in any order; the payload as proposed, before any
   * approver's edit), or null. Optional: a store without it
   * never replays, so a retried run proposes again.
   */
  findByRun?(tx: SkillTransaction, key: RunProposalKey): Promise<ProposalRecord | null>;
}

/** What makes a proposal of a run the same proposal again. */
export interface RunProposalKey {
  readonly tenantId: string;
  readonly runId: string;
  /** The proposing user and agent: another user (or agent) reusing a run id (a copied x-request-id) proposes anew. */
  readonly proposer: string;
  readonly agent: string | null;
  readonly action: string;
  readonly payload: unknown;
}
