import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Guard, RuntimeEvents } from '@zmodu/guard';
import { GuardStats } from '@zmodu/guard/internal';
import { SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { transactionOf } from '@zmodu/skills/internal';
import { DataSource } from 'typeorm';
import { InvalidProposalException } from './exceptions/invalid-proposal.exception';
import { ProposalNotFoundException } from './exceptions/proposal-not-found.exception';
import { PIPELINE_OPTIONS } from './pipeline.constants';
import { PIPELINE_STORE_CHOICE, ResolvedPipelineOptions } from './pipeline.options';
import { resolveStoreChoice } from '@zmodu/core';
import { Approver, EditPreview, EditPreviewInput, ProposalDecisions } from './proposal-decisions';
import { ProposalExecution } from './proposal-execution';
import { ProposalSubmission } from './proposal-submission';
import { ProposalStore } from './proposal.store';
import { DecisionInput, PipelineOutcome, ProposalContext, ProposalInput, ProposalRecord, ProposalStatus } from './proposal.types';
import { StagedActions } from './staged-actions';
import { TypeOrmProposalStore } from './typeorm-proposal.store';
import { ID_NOT_UUID_MESSAGE, LIMIT_MESSAGE, PAGE_MESSAGE, STATUS_MESSAGE } from './pipeline.messages';

export type { Approver, EditPreview, EditPreviewInput } from './proposal-decisions';

export interface ProposalPage {
  readonly items: ProposalRecord[];
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES: readonly ProposalStatus[] = ['refused', 'rejected', 'pending', 'approved', 'executed', 'failed', 'expired'];

/**
 * Staged execution (spec §3): propose check, payload and amount, risk review, approval flow,
 * execute check, and the staged skill through the one dispatcher. Proposals live in a
 * ProposalStore (PostgreSQL by default): a pending one survives a restart, and an approved one is
 * executed exactly once, in the transaction that marks it executed, even when approvers race or
 * the process dies between approval and execution. The work is split by job: submission and
 * review, decisions, execution and recovery, and the store.
 */
@Injectable()
export class ProposalPipeline implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ProposalPipeline');
  readonly guard: Guard;
  /** Counters of the pipeline's guard (propose and execute checks, staged dispatches). */
  readonly guardStats = new GuardStats();
  readonly store: ProposalStore;
  private readonly actions: StagedActions;
  private readonly submission: ProposalSubmission;
  private readonly decisions: ProposalDecisions;
  private readonly execution: ProposalExecution;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(PIPELINE_OPTIONS) private readonly options: ResolvedPipelineOptions,
    registry: SkillRegistry,
    dispatcher: SkillDispatcher,
    @Optional() @Inject(getDataSourceToken()) dataSource?: DataSource,
    /** Told of every verdict (a `proposal_verdict` event), e.g. for metrics. */
    @Optional() private readonly events?: RuntimeEvents,
  ) {
    this.store = resolveStoreChoice<ProposalStore, DataSource>({
      ...PIPELINE_STORE_CHOICE,
      choice: this.options.store,
      dataSource,
      typeorm: (ds) => new TypeOrmProposalStore(ds),
    });
    this.actions = new StagedActions(this.options, registry, dataSource ? transactionOf(dataSource.manager) : null);
    this.guard = new Guard(this.options.policy ?? { allow: this.actions.names(), allowExecute: true }, { stats: this.guardStats });
    this.execution = new ProposalExecution(this.options, this.store, dispatcher, this.guardStats, (verdict, settled) => {
      this.events?.emit({ type: 'proposal_verdict', verdict });
      this.events?.emit({ type: 'proposal_settled', ...settled });
    });
    this.submission = new ProposalSubmission(this.options, this.guard, this.actions, this.store, this.execution);
    this.decisions = new ProposalDecisions(this.store, this.actions, this.execution);
  }

  async onApplicationBootstrap(): Promise<void> {
    this.actions.check();
    await this.recover().catch((err) => this.logger.error(`recovery of approved proposals failed: ${String(err)}`));
    const every = this.options.recoveryIntervalMs;
    if (every > 0) {
      this.timer = setInterval(() => void this.recover().catch((err) => this.logger.error(`recovery failed: ${String(err)}`)), every);
      this.timer.unref();
    }
  }

  /** The recovery loop stops before any module's onApplicationShutdown closes the database. */
  beforeApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The actions approval.submit may propose. */
  proposable(): readonly string[] {
    return this.options.proposable;
  }

  async submit(ctx: ProposalContext, input: ProposalInput): Promise<PipelineOutcome> {
    const outcome = await this.submission.submit(ctx, input);
    if (!outcome.replayed) this.events?.emit({ type: 'proposal_verdict', verdict: outcome.verdict });
    return outcome;
  }

  /** A human decision on the version and step the approver read (see DecisionInput). */
  async decide(caller: Approver, id: string, input: DecisionInput): Promise<PipelineOutcome> {
    const outcome = await this.decisions.decide(caller, id, input);
    // The execution that a last approval starts reports its own verdict (executed, executor_failed).
    if (outcome.verdict === 'rejected_by_human' || outcome.verdict === 'approved_pending_next_step')
      this.events?.emit({ type: 'proposal_verdict', verdict: outcome.verdict });
    if (outcome.verdict === 'rejected_by_human' && this.events) {
      const rejected = await this.store.get(caller.tenantId, id).catch(() => null);
      this.events.emit({ type: 'proposal_settled', tenantId: caller.tenantId, proposalId: id, runId: rejected?.runId ?? null });
    }
    return outcome;
  }

  /**
   * What approving proposal `id` with an edited payload would do, for the version the approver read: the amount the
   * application computes, the chain that starts again and the steps it adds, the risk review's verdict; or why the edit
   * cannot apply. Nothing is written.
   */
  previewEdit(caller: Approver, id: string, input: EditPreviewInput): Promise<EditPreview> {
    return this.decisions.previewEdit(caller, id, input);
  }

  /**
   * The staged action's JSON Schema (its skill's parameters) and description, for a form that edits a payload; null
   * when the pipeline does not execute that action.
   */
  actionSchema(action: string): { action: string; description: string; schema: Record<string, unknown> } | null {
    return this.actions.schemaOf(action);
  }

  /** Execute an approved proposal if nobody else has it; null when it is not (or no longer) approved. */
  execute(id: string): Promise<PipelineOutcome | null> {
    return this.execution.execute(id);
  }

  /** Execute every approved proposal left behind (a process that died after the approval). Returns how many ran. */
  recover(): Promise<number> {
    return this.execution.recover();
  }

  /** One proposal of the tenant, with its decisions, version and waiting step. Another tenant's is not found. */
  async get(tenantId: string, id: string): Promise<ProposalRecord> {
    if (typeof id !== 'string' || !UUID.test(id)) throw new InvalidProposalException('id', ID_NOT_UUID_MESSAGE());
    await this.store.expire(tenantId);
    const p = await this.store.get(tenantId, id);
    if (!p) throw new ProposalNotFoundException(id);
    return p;
  }

  async list(tenantId: string, query: { status?: string; page?: number; limit?: number } = {}): Promise<ProposalPage> {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    if (!Number.isInteger(page) || page < 1) throw new InvalidProposalException('page', PAGE_MESSAGE());
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new InvalidProposalException('limit', LIMIT_MESSAGE());
    if (query.status !== undefined && !STATUSES.includes(query.status as ProposalStatus))
      throw new InvalidProposalException('status', STATUS_MESSAGE(STATUSES));
    await this.store.expire(tenantId);
    const { items, total } = await this.store.list(tenantId, { status: query.status as ProposalStatus | undefined, page, limit });
    return { items, total, page, limit };
  }
}
