import { scopeIdProblem } from '@zmodu/core';
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
  INVALID_CALLER_ID_MESSAGE,
  PROPOSAL_ALREADY_MESSAGE,
  PROPOSAL_CHANGED_MESSAGE,
  PROPOSAL_CHANGED_WHILE_DECIDING_MESSAGE,
  PREVIEW_PAYLOAD_MESSAGE,
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
import { ApprovalStep, DecisionInput, PipelineOutcome, ProposalContext, ProposalRecord } from './proposal.types';
import { StagedActions } from './staged-actions';

/** What an edit preview takes: the version the approver read and the edited payload. */
export interface EditPreviewInput {
  readonly version: number;
  readonly payload: unknown;
}

/**
 * What approving with an edited payload would do (nothing written): the amount the application computes, the chain that
 * starts again for it (`restarts`: an edit is a counter-proposal, signed again from the first step by others), the steps
 * of that chain the current one does not have, and the risk review's verdict; or why the edit cannot apply.
 */
export type EditPreview =
  | {
      readonly ok: true;
      readonly amount: number | null;
      readonly previousAmount: number | null;
      readonly steps: ApprovalStep[];
      readonly extraSteps: ApprovalStep[];
      readonly restarts: true;
      readonly risk: { readonly verdict: 'approve' | 'escalate'; readonly reason: string | null };
    }
  | { readonly ok: false; readonly reason: string; readonly field?: string };

/** The caller of a human decision. */
export interface Approver {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

/** Whether the proposal is expired, or pending past its expiry (nothing has marked it expired yet): no decision applies. */
const pastExpiry = (p: ProposalRecord) =>
  p.status === 'expired' || (p.status === 'pending' && p.expiresAt !== null && p.expiresAt <= new Date());

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
    // A chain tightened in the configuration since the proposal was made governs it too: the steps it lacks are added
    // (read at the version decided on, so the conditional write applies them only to what was read).
    const addSteps = edit || decision === 'reject' ? [] : await this.stepsAddedSince(caller.tenantId, id, version);
    const write = await this.store.decide({ ...base, ...(edit ? { edit } : {}), ...(addSteps.length ? { addSteps } : {}) });
    if (!write.applied) return this.explain(caller, id, version, step, write.alreadyDecided);
    if (write.status === 'rejected') return { ...(await this.outcome(caller.tenantId, id)), verdict: 'rejected_by_human' };
    if (write.status === 'pending') return { ...(await this.outcome(caller.tenantId, id)), verdict: 'approved_pending_next_step' };
    // The last step: execute now (if this process dies first, recovery executes it).
    return (await this.execution.execute(id)) ?? (await this.outcome(caller.tenantId, id));
  }

  /** The steps the action's chain asks today for the proposal's amount that its steps lack (counted: a chain may repeat one). */
  private async stepsAddedSince(tenantId: string, id: string, version: number): Promise<ApprovalStep[]> {
    const p = await this.store.get(tenantId, id);
    if (!p || p.version !== version || p.status !== 'pending') return []; // the write will not apply: explain() says why
    return missingSteps(p.steps, this.actions.stepsFor(p.action, p.amount));
  }

  private async edit(caller: Approver, id: string, version: number, payload: unknown): Promise<NonNullable<StoredDecision['edit']>> {
    const p = await this.current(caller.tenantId, id);
    if (p.version !== version || p.status !== 'pending') throw conflict(p, PROPOSAL_CHANGED_MESSAGE(id, p.version, version));
    const checked = await this.checkEdit(p, payload);
    if (!checked.ok) throw new ProposalEditRefusedException(checked.message, checked.field);
    return checked.edit;
  }

  /**
   * What an approval with this edited payload would do, without writing anything: the amount the application computes
   * for it, the chain it would start again, the steps that chain adds, and the risk review's verdict; or why it cannot
   * apply. For the version the approver read (another is a conflict, as for a decision).
   */
  async previewEdit(caller: Approver, id: string, input: EditPreviewInput): Promise<EditPreview> {
    checkApprover(caller);
    if (typeof id !== 'string' || !UUID.test(id)) throw new InvalidProposalException('id', ID_NOT_UUID_MESSAGE());
    if (!input || typeof input !== 'object') throw new InvalidProposalException('preview', DECISION_SHAPE_MESSAGE());
    const { version, payload } = input;
    if (!Number.isInteger(version) || version < 1 || version > 2 ** 31 - 1)
      throw new InvalidProposalException('version', VERSION_MESSAGE());
    if (payload === undefined) throw new InvalidProposalException('payload', PREVIEW_PAYLOAD_MESSAGE());
    const p = await this.current(caller.tenantId, id);
    // Past its expiry (even before anything marks it expired) no approval applies: nor does a preview (as decide's 409).
    if (pastExpiry(p)) throw conflict({ ...p, status: 'expired' }, `Proposal ${id} has expired.`);
    if (p.version !== version || p.status !== 'pending') throw conflict(p, PROPOSAL_CHANGED_MESSAGE(id, p.version, version));
    // Only someone who may approve the waiting step may preview an edit of it (as for the decision itself).
    mayDecide(caller, p);
    const checked = await this.checkEdit(p, payload);
    if (!checked.ok) return { ok: false, reason: checked.message, ...(checked.field !== undefined ? { field: checked.field } : {}) };
    return {
      ok: true,
      amount: checked.edit.after.amount,
      previousAmount: p.amount,
      steps: [...checked.edit.steps],
      extraSteps: missingSteps(p.steps, checked.edit.steps),
      restarts: true,
      risk: checked.risk,
    };
  }

  /** Validate, price and review an edited payload of `p` (as the proposer's context): the edit, or why it cannot apply. */
  private async checkEdit(
    p: ProposalRecord,
    payload: unknown,
  ): Promise<
    | { ok: true; edit: NonNullable<StoredDecision['edit']>; risk: { verdict: 'approve' | 'escalate'; reason: string | null } }
    | { ok: false; message: string; field?: string }
  > {
    const ctx: ProposalContext = {
      tenantId: p.tenantId,
      userId: p.proposer,
      permissions: p.permissions,
      ...(p.agent ? { agent: p.agent } : {}),
    };
    const prepared = await this.actions.prepare(ctx, p.action, payload);
    if (!prepared.ok)
      return {
        ok: false,
        message: EDIT_CANNOT_APPLY_MESSAGE(prepared.reason),
        ...(prepared.field !== undefined ? { field: prepared.field } : {}),
      };
    const risk = await this.actions.review(ctx, p.action, prepared.payload, prepared.amount);
    if (risk.verdict === 'reject') return { ok: false, message: EDIT_RISK_REJECTED_MESSAGE(risk.reason) };
    return {
      ok: true,
      edit: {
        before: { payload: p.payload, amount: p.amount },
        after: { payload: prepared.payload, amount: prepared.amount },
        steps: this.actions.stepsFor(p.action, prepared.amount),
      },
      risk: risk.verdict === 'escalate' ? { verdict: 'escalate', reason: risk.reason } : { verdict: 'approve', reason: null },
    };
  }

  /** Why a decision did not apply: read the proposal and say so (nothing was written). */
  private async explain(caller: Approver, id: string, version: number, step: number, alreadyDecided: boolean): Promise<never> {
    if (alreadyDecided) throw new ApprovalForbiddenException(ALREADY_DECIDED_MESSAGE());
    const p = await this.current(caller.tenantId, id);
    if (pastExpiry(p)) throw conflict({ ...p, status: 'expired' }, `Proposal ${id} has expired.`);
    if (p.status !== 'pending') throw conflict(p, PROPOSAL_ALREADY_MESSAGE(id, p.status));
    if (p.version !== version) throw conflict(p, PROPOSAL_CHANGED_MESSAGE(id, p.version, version));
    if (p.waitingStep?.index !== step) throw conflict(p, STEP_NOT_WAITING_MESSAGE(id, step, p.waitingStep?.index ?? null));
    mayDecide(caller, p, step);
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

/** The steps of `wanted` that `held` lacks, counted (a chain may ask the same step twice: two people sign it). */
function missingSteps(held: readonly ApprovalStep[], wanted: readonly ApprovalStep[]): ApprovalStep[] {
  const key = (s: ApprovalStep) => `${s.name}\u0000${s.permission}`;
  const left = new Map<string, number>();
  for (const s of held) left.set(key(s), (left.get(key(s)) ?? 0) + 1);
  const missing: ApprovalStep[] = [];
  for (const s of wanted) {
    const n = left.get(key(s)) ?? 0;
    if (n > 0) left.set(key(s), n - 1);
    else missing.push({ ...s });
  }
  return missing;
}

/** Separation of duties: not the proposer, not someone who decided already, and holding the waiting step's permission. */
function mayDecide(caller: Approver, p: ProposalRecord, step = p.waitingStep?.index ?? 0): void {
  if (p.proposer === caller.userId) throw new ApprovalForbiddenException(PROPOSER_DECIDES_MESSAGE());
  if (p.decisions.some((d) => d.decidedBy === caller.userId)) throw new ApprovalForbiddenException(ALREADY_DECIDED_MESSAGE());
  const permission = p.waitingStep?.permission ?? DEFAULT_STEPS[0].permission;
  if (!caller.permissions.includes(permission))
    throw new ApprovalForbiddenException(STEP_PERMISSION_MESSAGE(step, p.waitingStep?.name ?? 'approver', permission));
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
  // Separation of duties compares approver ids: `lee\u200b` must not pass for someone other than `lee`.
  for (const field of ['tenantId', 'userId'] as const) {
    const problem = scopeIdProblem(field, c[field]);
    if (problem) throw new InvalidProposalException(field, INVALID_CALLER_ID_MESSAGE(problem));
  }
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
