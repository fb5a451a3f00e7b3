import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Guard } from '@zmodu/guard';
import { scopeIdProblem } from '@zmodu/core';
import { SkillTransaction } from '@zmodu/skills/internal';
import { InvalidProposalException } from './exceptions/invalid-proposal.exception';
import { ResolvedPipelineOptions } from './pipeline.options';
import { StagedCallFailed } from './exceptions/staged-call-failed.exception';
import { outcomeOf } from './proposal-decisions';
import { ProposalExecution } from './proposal-execution';
import { NewProposal, ProposalStore } from './proposal.store';
import {
  ApprovalStep,
  PipelineOutcome,
  ProposalContext,
  ProposalInput,
  ProposalRecord,
  ProposalStatus,
  ProposalVerdict,
} from './proposal.types';
import { reviewByRules, RiskVerdict } from './risk-review';
import { StagedActions } from './staged-actions';
import {
  INVALID_CALLER_ID_MESSAGE,
  ACTION_MISSING_MESSAGE,
  AMOUNT_GIVEN_MESSAGE,
  PAYLOAD_TOO_BIG_MESSAGE,
  PROPOSER_PERMISSIONS_MISSING_MESSAGE,
  PROPOSER_TENANT_MISSING_MESSAGE,
  PROPOSER_USER_MISSING_MESSAGE,
} from './pipeline.messages';

const MAX_PAYLOAD_BYTES = 64 * 1024;

/**
 * Submit and review (spec §3): propose check, payload against the action's schema, the amount
 * computed by the application, risk review (rules, reviewers, velocity under a lock), then the
 * human queue, or execution at once in the transaction that records the proposal.
 */
export class ProposalSubmission {
  private readonly logger = new Logger('ProposalPipeline');

  constructor(
    private readonly options: ResolvedPipelineOptions,
    private readonly guard: Guard,
    private readonly actions: StagedActions,
    private readonly store: ProposalStore,
    private readonly execution: ProposalExecution,
  ) {}

  async submit(ctx: ProposalContext, input: ProposalInput): Promise<PipelineOutcome> {
    checkContext(ctx);
    const action = checkInput(input);
    // 1. Propose check, then the payload and its amount: a refusal here stores nothing.
    const propose = this.guard.check('propose', action);
    if (!propose.allowed) return refused(propose.cause);
    const prepared = await this.actions.prepare(ctx, action, input.payload);
    if (!prepared.ok) return refused(prepared.reason, prepared.field);
    const { payload, amount } = prepared;
    const id = randomUUID();
    const base = {
      id,
      tenantId: ctx.tenantId,
      action,
      payload,
      amount,
      proposer: ctx.userId,
      permissions: [...ctx.permissions],
      agent: ctx.agent ?? null,
      runId: ctx.runId ?? null,
    };
    // 2. Risk review outside any transaction; velocity is counted and written under one lock.
    let risk: RiskVerdict = await this.actions.review(ctx, action, payload, amount);
    const velocity = this.options.risk.velocity;
    const place = async (tx?: SkillTransaction) => {
      if (velocity && tx && risk.verdict !== 'reject') {
        const proposer = velocity.per === 'user' ? ctx.userId : null;
        await this.store.lockVelocity(tx, JSON.stringify(proposer === null ? [ctx.tenantId] : [ctx.tenantId, proposer]));
        const n = await this.store.countRecent(tx, ctx.tenantId, proposer, new Date(Date.now() - velocity.windowMs));
        const v = reviewByRules({ velocity }, { action, payload, amount }, ctx, n);
        if (v.verdict === 'reject') risk = v;
      }
      const write = (
        status: NewProposal['status'],
        verdict: ProposalVerdict,
        reason: string | null,
        steps: ApprovalStep[],
        result?: unknown,
      ) =>
        this.store.insert({ ...base, status, verdict, reason, steps, expiresAt: status === 'pending' ? this.expiry() : null, result }, tx);
      if (risk.verdict === 'reject') {
        await write('rejected', 'risk_rejected', risk.reason, []);
        return { verdict: 'risk_rejected' as const, status: 'rejected' as const, reason: risk.reason, steps: [] };
      }
      // 3. Escalations wait for humans.
      if (risk.verdict === 'escalate') {
        const steps = this.actions.stepsFor(action, amount);
        await write('pending', 'needs_human', risk.reason, steps);
        return { verdict: 'needs_human' as const, status: 'pending' as const, reason: risk.reason, steps };
      }
      // 4. Execute check: the pipeline's policy and the proposer's own; a refusal goes to the human queue, under the
      // action's approval chain like an escalation (a chain governs every human approval of its action).
      const exec = this.guard.check('execute', action);
      if (!exec.allowed || ctx.mayExecute === false) {
        const reason = exec.allowed ? `the proposer may not execute ${action} (its policy refuses it): a human must approve` : exec.cause;
        const steps = this.actions.stepsFor(action, amount);
        await write('pending', 'execute_not_permitted', reason, steps);
        return { verdict: 'execute_not_permitted' as const, status: 'pending' as const, reason, steps };
      }
      // 5. The staged skill, through the dispatcher, in the transaction that records the proposal as executed.
      const result = await this.execution.run(tx as SkillTransaction, { ...base, approvers: [] });
      await write('executed', 'executed', null, [], result);
      return { verdict: 'executed' as const, status: 'executed' as const, reason: null, steps: [], result };
    };
    const autoExecute = risk.verdict === 'approve' && this.guard.evaluate('execute', action).allowed && ctx.mayExecute !== false;
    // A run started again under its run id (its process died after this proposal committed) gets its proposal back.
    const findByRun = ctx.runId && this.store.findByRun ? this.store.findByRun.bind(this.store) : undefined;
    const runKey = { tenantId: ctx.tenantId, runId: ctx.runId as string, proposer: ctx.userId, agent: ctx.agent ?? null, action, payload };
    let placed: Awaited<ReturnType<typeof place>> | { replay: ProposalRecord };
    try {
      placed = findByRun
        ? await this.store.transaction(async (tx) => {
            const prior = await findByRun(tx, runKey);
            return prior ? { replay: prior } : place(tx);
          })
        : velocity || autoExecute
          ? await this.store.transaction(place)
          : await place();
    } catch (err) {
      if (!(err instanceof StagedCallFailed)) throw err;
      this.logger.warn(`proposal ${id} (${action}) failed to execute: ${err.reason}`);
      await this.store.insert({
        ...base,
        status: 'failed',
        verdict: 'executor_failed',
        reason: err.reason.slice(0, 1000),
        steps: [],
        expiresAt: null,
      });
      return { verdict: 'executor_failed', proposalId: id, status: 'failed', reason: err.reason, amount };
    }
    // The stored proposal as it is now (a human may have decided it since).
    if ('replay' in placed) return { ...outcomeOf(placed.replay), replayed: true };
    return {
      verdict: placed.verdict,
      proposalId: id,
      status: placed.status,
      reason: placed.reason,
      amount,
      ...('result' in placed ? { result: placed.result } : {}),
      ...(placed.steps.length ? { waitingFor: placed.steps, version: 1 } : {}),
    };
  }

  private expiry(): Date {
    return new Date(Date.now() + this.options.approval.expiresInMs);
  }
}

function refused(reason: string, field?: string): PipelineOutcome {
  return { verdict: 'propose_refused', proposalId: null, status: 'refused' as ProposalStatus, reason, ...(field ? { field } : {}) };
}

function checkContext(ctx: ProposalContext): void {
  if (!ctx || typeof ctx.tenantId !== 'string' || ctx.tenantId === '')
    throw new InvalidProposalException('tenantId', PROPOSER_TENANT_MISSING_MESSAGE());
  if (typeof ctx.userId !== 'string' || ctx.userId === '') throw new InvalidProposalException('userId', PROPOSER_USER_MISSING_MESSAGE());
  // The proposer is who separation of duties keeps from deciding: an id that only looks like another's is no id.
  for (const field of ['tenantId', 'userId'] as const) {
    const problem = scopeIdProblem(field, ctx[field]);
    if (problem) throw new InvalidProposalException(field, INVALID_CALLER_ID_MESSAGE(problem));
  }
  if (!Array.isArray(ctx.permissions) || ctx.permissions.some((p) => typeof p !== 'string'))
    throw new InvalidProposalException('permissions', PROPOSER_PERMISSIONS_MISSING_MESSAGE());
}

function checkInput(input: ProposalInput): string {
  if (!input || typeof input.action !== 'string' || input.action === '' || input.action.length > 200)
    throw new InvalidProposalException('action', ACTION_MISSING_MESSAGE());
  if ('amount' in input) throw new InvalidProposalException('amount', AMOUNT_GIVEN_MESSAGE());
  let text: string | undefined;
  try {
    text = JSON.stringify(input.payload ?? null);
  } catch {
    text = undefined;
  }
  if (text === undefined || Buffer.byteLength(text) > MAX_PAYLOAD_BYTES)
    throw new InvalidProposalException('payload', PAYLOAD_TOO_BIG_MESSAGE(MAX_PAYLOAD_BYTES));
  return input.action;
}
