/**
 * A proposal as a run that waits on it reads it: still `pending` (or approved, not yet executed), or settled
 * (`executed`, `rejected`, `failed`, `expired`), with what the model is told of it (`observation`, JSON).
 */
export interface ProposalOutcome {
  readonly proposalId: string;
  readonly status: 'pending' | 'approved' | 'executed' | 'rejected' | 'failed' | 'expired';
  readonly observation: string;
  /** Who made it: the run, the proposing user and the agent (a run waits only on proposals it made itself). */
  readonly runId: string | null;
  readonly proposer: string;
  readonly agent: string | null;
}

/**
 * The port between the proposal pipeline and the runs that wait on its proposals (@zmodu/pipeline provides it,
 * @zmodu/agent's worker reads it, neither imports the other): the proposals of one tenant as they stand in the
 * pipeline's store. A run resumes on what this answers, never on what an event or a caller says.
 */
export interface ProposalOutcomes {
  outcomes(tenantId: string, proposalIds: readonly string[]): Promise<ProposalOutcome[]>;
  /** Expire those still pending now (a run stopped waiting on them): after it, no human decides them. */
  expire?(tenantId: string, proposalIds: readonly string[]): Promise<void>;
}

/** The injection token of ProposalOutcomes (global: PipelineModule exports it). */
export const PROPOSAL_OUTCOMES = Symbol.for('zmodu.proposal-outcomes');
