import { Logger } from '@nestjs/common';
import { Guard } from '@zmodu/guard';
import { GuardStats } from '@zmodu/guard/internal';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { SkillTransaction, stagedExecution } from '@zmodu/skills/internal';
import { StagedCallFailed } from './exceptions/staged-call-failed.exception';
import { ResolvedPipelineOptions } from './pipeline.options';
import { ProposalStore } from './proposal.store';
import { PipelineOutcome, ProposalRecord } from './proposal.types';

/** What a staged call needs of its proposal. */
export interface StagedCall {
  readonly id: string;
  readonly tenantId: string;
  readonly action: string;
  readonly payload: unknown;
  readonly proposer: string;
  readonly permissions: readonly string[];
  readonly runId: string | null;
  readonly approvers: readonly string[];
}

/**
 * Execution, exactly once. An approved proposal is claimed (a row lock, skipping one that another
 * transaction holds), its staged skill dispatched through the one SkillDispatcher with the
 * proposal's tenant, the proposer and the permissions captured at submit, the approvers and the
 * claiming transaction, under the pipeline's policy; permission, schema, audit and metering apply
 * as to any call. The skill's writes and the 'executed' mark commit together, or neither does.
 */
/** A proposal that left the queue for good: which, whose, and the run that proposed it. */
export interface SettledProposal {
  readonly proposalId: string;
  readonly tenantId: string;
  readonly runId: string | null;
}

export class ProposalExecution {
  private readonly logger = new Logger('ProposalPipeline');

  constructor(
    private readonly options: ResolvedPipelineOptions,
    private readonly store: ProposalStore,
    private readonly dispatcher: SkillDispatcher,
    private readonly stats: GuardStats,
    /**
     * Told of each execution's verdict (executed, executor_failed), whoever started it: a last approval, execute(),
     * recovery; with the proposal it settled (its tenant and the run that proposed it).
     */
    private readonly onVerdict: (verdict: 'executed' | 'executor_failed', settled: SettledProposal) => void = () => undefined,
  ) {}

  /** Dispatch the staged skill in `tx`; its value, or StagedCallFailed. */
  async run(tx: SkillTransaction, p: StagedCall): Promise<unknown> {
    // The pipeline's lists still apply; its execute switch was settled before (a proposal it refused
    // went to a human, whose approval is what lets it run now).
    const policy = this.options.policy ? { ...this.options.policy, allowExecute: true } : { allow: [p.action], allowExecute: true };
    const ctx = createSkillContext({
      guard: new Guard(policy, { stats: this.stats }),
      tenantId: p.tenantId,
      userId: p.proposer,
      permissions: p.permissions,
      runId: p.runId ?? p.id,
      agent: this.options.agent,
      staged: stagedExecution({ proposalId: p.id, approvers: p.approvers, transaction: tx }),
    });
    const r = await this.dispatcher.dispatch(ctx, p.action, p.payload);
    if (!r.ok) throw new StagedCallFailed(r.observation);
    return r.value ?? null;
  }

  /** Execute an approved proposal if nobody else has it; null when it is not (or no longer) approved. */
  async execute(id: string): Promise<PipelineOutcome | null> {
    let failure: StagedCallFailed | undefined;
    let claimed: ProposalRecord | undefined;
    const done = await this.store
      .transaction(async (tx) => {
        const p = await this.store.claimApproved(tx, id);
        if (!p) return null;
        claimed = p;
        const result = await this.run(tx, { ...p, approvers: approversOf(p) });
        await this.store.markExecuted(tx, id, result);
        return { ...p, result };
      })
      .catch((err: unknown) => {
        // Only the staged call's own refusal or failure settles the proposal as failed; a database
        // error leaves it approved, for the next recovery pass.
        if (!(err instanceof StagedCallFailed)) throw err;
        failure = err;
        return null;
      });
    if (done) {
      this.onVerdict('executed', { proposalId: id, tenantId: done.tenantId, runId: done.runId });
      return { verdict: 'executed', proposalId: id, status: 'executed', reason: null, result: done.result, amount: done.amount };
    }
    if (!failure) return null;
    this.logger.warn(`proposal ${id} failed to execute: ${failure.reason}`);
    await this.store.markFailed(id, failure.reason);
    if (claimed) this.onVerdict('executor_failed', { proposalId: id, tenantId: claimed.tenantId, runId: claimed.runId });
    return { verdict: 'executor_failed', proposalId: id, status: 'failed', reason: failure.reason };
  }

  /** Execute every approved proposal left behind (a process that died after the approval). Returns how many ran. */
  async recover(): Promise<number> {
    let n = 0;
    for (const id of await this.store.approvedIds(100)) if ((await this.execute(id))?.verdict === 'executed') n++;
    return n;
  }
}

/** Who signed the payload that runs, in step order: the approvals since the last edit (an editor proposed that payload). */
export function approversOf(p: ProposalRecord): string[] {
  const lastEdit = p.decisions.reduce((v, d) => (d.edit ? Math.max(v, d.version) : v), 0);
  return p.decisions.filter((d) => d.decision === 'approve' && !d.edit && d.version > lastEdit).map((d) => d.decidedBy);
}
