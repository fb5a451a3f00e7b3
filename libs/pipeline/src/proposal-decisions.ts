import { ApprovalForbiddenException } from './exceptions/approval-forbidden.exception';
import { InvalidProposalException } from './exceptions/invalid-proposal.exception';
import { ProposalConflictException } from './exceptions/proposal-conflict.exception';
import { ProposalEditRefusedException } from './exceptions/proposal-edit-refused.exception';
import { ProposalNotFoundException } from './exceptions/proposal-not-found.exception';
import {
  ALREADY_DECIDED_MESSAGE,
  APPROVER_MISSING_MESSAGE,
  DECISION_KIND_MESSAGE,
  DECISION_SHAPE_MESSAGE,
  EDIT_CANNOT_APPLY_MESSAGE,
  EDIT_ON_REJECT_MESSAGE,
  EDIT_RISK_REJECTED_MESSAGE,
  ID_NOT_UUID_MESSAGE,
  PROPOSAL_ALREADY_MESSAGE,
  PROPOSAL_CHANGED_MESSAGE,
  PROPOSAL_CHANGED_WHILE_DECIDING_MESSAGE,
  PROPOSER_DECIDES_MESSAGE,
  REASON_MESSAGE,
  STEP_MESSAGE,
  STEP_NOT_WAITING_MESSAGE,
  STEP_PERMISSION_MESSAGE,
  VERSION_MESSAGE,
} from './pipeline.messages';
import { DEFAULT_STEPS } from './pipeline.options';
import { ProposalExecution } from './proposal-execution';
import { ProposalStore, StoredDecision } from './proposal.store';
import { DecisionInput, PipelineOutcome, ProposalContext, ProposalRecord } from './proposal.types';
import { StagedActions } from './staged-actions';

/** The caller of a human decision. */
export interface Approver {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Human decisions. A decision binds to what the approver read: it names the proposal's version and
 * the waiting step, and applies in one conditional write only while both are still current;
 * anything else is a conflict and nothing executes. The payload that executes is the one the last
 * approver approved. An approver may approve with an edited payload: it is validated against the
 * action's schema, re-priced and re-reviewed, and it is a counter-proposal: the chain for the new
 * amount starts again, signed by others (the editor has decided once already), so every step of
 * the chain that applies to the payload that runs is signed by someone who read that payload.
 */
export class ProposalDecisions {
  constructor(
    private readonly store: ProposalStore,
    private readonly actions: StagedActions,
    private readonly execution: ProposalExecution,
  ) {}

  async decide(caller: Approver, id: string, input: DecisionInput): Promise<PipelineOutcome> {
    checkApprover(caller);
    if (typeof id !== 'string' || !UUID.test(id)) throw new InvalidProposalException('id', ID_NOT_UUID_MESSAGE());
    const { decision, reason, version, step } = checkDecision(input);
    const base: Omit<StoredDecision, 'edit'> = {
      tenantId: caller.tenantId,
      id,
      decidedBy: caller.userId,
      permissions: [...caller.permissions],
      decision,
      reason,
      version,
      step,
      defaultPermission: DEFAULT_STEPS[0].permission,
    };
    // An edit is checked against the proposal as read (the same version), before the write.
    const edit = input.payload !== undefined ? await this.edit(caller, id, version, input.payload) : undefined;
    const write = await this.store.decide({ ...base, ...(edit ? { edit } : {}) });
    if (!write.applied) return this.explain(caller, id, version, step, write.alreadyDecided);
    if (write.status === 'rejected') return { ...(await this.outcome(caller.tenantId, id)), verdict: 'rejected_by_human' };
    if (write.status === 'pending') return { ...(await this.outcome(caller.tenantId, id)), verdict: 'approved_pending_next_step' };
    // The last step: execute now (if this process dies first, recovery executes it).
    return (await this.execution.execute(id)) ?? (await this.outcome(caller.tenantId, id));
  }

  private async edit(caller: Approver, id: string, version: number, payload: unknown): Promise<NonNullable<StoredDecision['edit']>> {
    const p = await this.current(caller.tenantId, id);
    if (p.version !== version || p.status !== 'pending') throw conflict(p, PROPOSAL_CHANGED_MESSAGE(id, p.version, version));
    const ctx: ProposalContext = {
      tenantId: p.tenantId,
      userId: p.proposer,
      permissions: p.permissions,
      ...(p.agent ? { agent: p.agent } : {}),
    };
    const prepared = await this.actions.prepare(ctx, p.action, payload);
    if (!prepared.ok) throw new ProposalEditRefusedException(EDIT_CANNOT_APPLY_MESSAGE(prepared.reason), prepared.field);
    const risk = await this.actions.review(ctx, p.action, prepared.payload, prepared.amount);
    if (risk.verdict === 'reject') throw new ProposalEditRefusedException(EDIT_RISK_REJECTED_MESSAGE(risk.reason));
    return {
      before: { payload: p.payload, amount: p.amount },
      after: { payload: prepared.payload, amount: prepared.amount },
      steps: this.actions.stepsFor(p.action, prepared.amount),
    };
  }

  /** Why a decision did not apply: read the proposal and say so (nothing was written). */
  private async explain(caller: Approver, id: string, version: number, step: number, alreadyDecided: boolean): Promise<never> {
    if (alreadyDecided) throw new ApprovalForbiddenException(ALREADY_DECIDED_MESSAGE());
    const p = await this.current(caller.tenantId, id);
    if (p.status === 'expired' || (p.status === 'pending' && p.expiresAt && p.expiresAt <= new Date()))
      throw conflict({ ...p, status: 'expired' }, `Proposal ${id} has expired.`);
    if (p.status !== 'pending') throw conflict(p, PROPOSAL_ALREADY_MESSAGE(id, p.status));
    if (p.version !== version) throw conflict(p, PROPOSAL_CHANGED_MESSAGE(id, p.version, version));
    if (p.waitingStep?.index !== step) throw conflict(p, STEP_NOT_WAITING_MESSAGE(id, step, p.waitingStep?.index ?? null));
    if (p.proposer === caller.userId) throw new ApprovalForbiddenException(PROPOSER_DECIDES_MESSAGE());
    if (p.decisions.some((d) => d.decidedBy === caller.userId)) throw new ApprovalForbiddenException(ALREADY_DECIDED_MESSAGE());
    const permission = p.waitingStep?.permission ?? DEFAULT_STEPS[0].permission;
    if (!caller.permissions.includes(permission))
      throw new ApprovalForbiddenException(STEP_PERMISSION_MESSAGE(step, p.waitingStep?.name ?? 'approver', permission));
    // Everything matched on re-reading: another decision landed in between.
    throw conflict(p, PROPOSAL_CHANGED_WHILE_DECIDING_MESSAGE(id));
  }

  private async current(tenantId: string, id: string): Promise<ProposalRecord> {
    const p = await this.store.get(tenantId, id);
    if (!p) throw new ProposalNotFoundException(id);
    return p;
  }

  private async outcome(tenantId: string, id: string): Promise<PipelineOutcome> {
    return outcomeOf(await this.current(tenantId, id));
  }
}

export function outcomeOf(p: ProposalRecord): PipelineOutcome {
  const waiting = p.status === 'pending' ? p.steps.slice(p.approvals) : [];
  return {
    verdict: p.verdict,
    proposalId: p.id,
    status: p.status,
    reason: p.reason,
    amount: p.amount,
    ...(p.status === 'executed' ? { result: p.result } : {}),
    ...(waiting.length ? { waitingFor: waiting, version: p.version } : {}),
  };
}

function conflict(p: ProposalRecord, message: string): ProposalConflictException {
  return new ProposalConflictException(p.status, message, { status: p.status, version: p.version, step: p.waitingStep?.index ?? null });
}

function checkApprover(c: Approver): void {
  if (
    !c ||
    typeof c.tenantId !== 'string' ||
    c.tenantId === '' ||
    typeof c.userId !== 'string' ||
    c.userId === '' ||
    !Array.isArray(c.permissions)
  )
    throw new InvalidProposalException('caller', APPROVER_MISSING_MESSAGE());
}

function checkDecision(input: DecisionInput): { decision: 'approve' | 'reject'; reason: string; version: number; step: number } {
  if (!input || typeof input !== 'object') throw new InvalidProposalException('decision', DECISION_SHAPE_MESSAGE());
  const { decision, reason, version, step } = input;
  if (decision !== 'approve' && decision !== 'reject') throw new InvalidProposalException('decision', DECISION_KIND_MESSAGE());
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 1000 || reason.includes('\u0000'))
    throw new InvalidProposalException('reason', REASON_MESSAGE());
  if (!Number.isInteger(version) || version < 1 || version > 2 ** 31 - 1) throw new InvalidProposalException('version', VERSION_MESSAGE());
  if (!Number.isInteger(step) || step < 0 || step > 1000) throw new InvalidProposalException('step', STEP_MESSAGE());
  if (input.payload !== undefined && decision !== 'approve') throw new InvalidProposalException('payload', EDIT_ON_REJECT_MESSAGE());
  return { decision, reason, version, step };
}
