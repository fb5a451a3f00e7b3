import {
  applyDecorators,
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Optional,
  Param,
  Post,
  Query,
  UseFilters,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from './swagger-decorators';
import { AGENT_RUN_STORE } from '@zmodu/agent/internal';
import { AgentRunRecord, AgentRunStore, ToolCallRecord } from '@zmodu/agent';
import { AUDIT_LOG_STORE } from '@zmodu/guard/internal';
import { AuditLogStore, AuditRecord, Redactor } from '@zmodu/guard';
import { EditPreview, PipelineOutcome, ProposalPage, ProposalPipeline, ProposalRecord } from '@zmodu/pipeline';
import { AdminExceptionFilter } from './admin-exception.filter';
import {
  ACTION_SCHEMA_SCHEMA,
  ApiFieldError,
  ApiPageQuery,
  EDIT_PREVIEW_SCHEMA,
  PREVIEW_BODY_SCHEMA,
  PROPOSAL_RUN_SCHEMA,
  CONFLICT_SCHEMA,
  DECISION_BODY_SCHEMA,
  FIELD_ERROR_SCHEMA,
  HTTP_ERROR_SCHEMA,
  PIPELINE_OUTCOME_SCHEMA,
  PROPOSAL_PAGE_SCHEMA,
  PROPOSAL_SCHEMA,
} from './admin.openapi';
import { AdminCaller } from './admin.options';
import { DecisionBody, OptionalIntPipe, ParseDecisionBodyPipe, ParseIdPipe, ParsePreviewBodyPipe, PreviewBody } from './admin.pipes';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

/** The most audited calls GET /admin/approvals/:id/run answers (a run's own calls: a run makes far fewer). */
const RUN_CALLS_LIMIT = 500;

/** A stored agent run as an approver sees it. */
export interface ProposalRunRecord {
  readonly id: string;
  readonly agent: string;
  readonly goal: string;
  readonly status: string;
  readonly answer: string | null;
  readonly stoppedReason: string | null;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly steps: ReadonlyArray<{
    readonly index: number;
    readonly text: string;
    /** The tool calls with their guard decisions (not the observation the model saw: the audited result is in `calls`). */
    readonly toolCalls: ReadonlyArray<Omit<ToolCallRecord, 'observation'>>;
  }>;
  /** A waiting run's proposals (this one among them) and until when it waits; empty once it went on. */
  readonly waitingFor: readonly string[];
  readonly waitUntil: Date | null;
  /** The decisions the run was told, as the pipeline's store held them (the run goes on from each). */
  readonly decisions: ReadonlyArray<{ readonly proposalId: string; readonly status: string }>;
  /** The step whose tool call made this proposal: the steps after it are what the agent did after the decision. */
  readonly proposedAtStep: number | null;
}

/** GET /admin/approvals/:id/run. */
export interface ProposalRun {
  readonly runId: string | null;
  readonly run: ProposalRunRecord | null;
  readonly calls: AuditRecord[];
}

/** What a decision takes and answers, in the OpenAPI document. */
const ApiDecision = () =>
  applyDecorators(
    ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } }),
    ApiBody({ schema: DECISION_BODY_SCHEMA }),
    ApiOkResponse({ description: 'The outcome', schema: PIPELINE_OUTCOME_SCHEMA }),
    ApiFieldError(),
    ApiNotFoundResponse({ description: "No such proposal in the caller's tenant", schema: HTTP_ERROR_SCHEMA }),
    ApiConflictResponse({
      description: 'Decided or expired already, or not the current version or step: read it again',
      schema: CONFLICT_SCHEMA,
    }),
  );

/**
 * The human approval queue, per tenant: an admin sees and decides only the proposals of the
 * tenant in their token (another tenant's is a 404, as if it did not exist). The permission is
 * the `decidePermission` option; pipeline exceptions become status codes in AdminExceptionFilter.
 */
@ApiTags('admin: approvals')
@Controller('admin/approvals')
@RequireAdminPermission('decidePermission')
@UseFilters(AdminExceptionFilter)
export class ApprovalsController {
  constructor(
    private readonly pipeline: ProposalPipeline,
    @Optional() @Inject(AGENT_RUN_STORE) private readonly runs?: AgentRunStore | null,
    @Optional() @Inject(AUDIT_LOG_STORE) private readonly audit?: AuditLogStore,
    @Optional() private readonly redactor?: Redactor,
  ) {}

  @Get()
  @ApiOperation({ summary: "The proposals of the caller's tenant, newest first" })
  @ApiQuery({
    name: 'status',
    required: false,
    schema: { type: 'string', enum: ['refused', 'rejected', 'pending', 'approved', 'executed', 'failed', 'expired'] },
  })
  @ApiPageQuery()
  @ApiOkResponse({ schema: PROPOSAL_PAGE_SCHEMA })
  @ApiFieldError()
  list(
    @CurrentCaller() caller: AdminCaller,
    @Query('status') status?: string,
    @Query('page', new OptionalIntPipe()) page?: number,
    @Query('limit', new OptionalIntPipe(1, 100)) limit?: number,
  ): Promise<ProposalPage> {
    return this.pipeline.list(caller.tenantId, { status, page, limit });
  }

  @Get(':id')
  @ApiOperation({ summary: 'One proposal with its decisions, version and waiting step' })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiOkResponse({ schema: PROPOSAL_SCHEMA })
  @ApiFieldError()
  @ApiNotFoundResponse({ description: "No such proposal in the caller's tenant", schema: HTTP_ERROR_SCHEMA })
  get(@CurrentCaller() caller: AdminCaller, @Param('id', ParseIdPipe) id: string): Promise<ProposalRecord> {
    return this.pipeline.get(caller.tenantId, id);
  }

  @Get(':id/schema')
  @ApiOperation({ summary: "The JSON Schema of the proposal's action (its payload), for a form that edits it" })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiOkResponse({ schema: ACTION_SCHEMA_SCHEMA })
  @ApiFieldError()
  @ApiNotFoundResponse({ description: "No such proposal in the caller's tenant", schema: HTTP_ERROR_SCHEMA })
  async schema(
    @CurrentCaller() caller: AdminCaller,
    @Param('id', ParseIdPipe) id: string,
  ): Promise<{ action: string; description: string; schema: Record<string, unknown> }> {
    const p = await this.pipeline.get(caller.tenantId, id);
    const schema = this.pipeline.actionSchema(p.action);
    if (!schema) throw new NotFoundException(`The action '${p.action}' of proposal ${id} is no longer one the pipeline executes.`);
    return schema;
  }

  /**
   * Body: { version, payload }. What approving with this edited payload would do, computed by the application (the
   * amount, the chain that starts again, the steps it adds, the risk review), or why it cannot apply. Nothing is written.
   */
  @Post(':id/preview')
  @HttpCode(200)
  @ApiOperation({ summary: 'Preview an approval with an edited payload: the recomputed amount and the steps it triggers' })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiBody({ schema: PREVIEW_BODY_SCHEMA })
  @ApiOkResponse({ description: 'What the edit would do, or why it cannot apply (ok: false)', schema: EDIT_PREVIEW_SCHEMA })
  @ApiFieldError()
  @ApiNotFoundResponse({ description: "No such proposal in the caller's tenant", schema: HTTP_ERROR_SCHEMA })
  @ApiConflictResponse({ description: 'Not the current version, or no longer pending: read it again', schema: CONFLICT_SCHEMA })
  preview(
    @CurrentCaller() caller: AdminCaller,
    @Param('id', ParseIdPipe) id: string,
    @Body(ParsePreviewBodyPipe) body: PreviewBody,
  ): Promise<EditPreview> {
    return this.pipeline.previewEdit(caller, id, body);
  }

  /**
   * The agent run that made the proposal: the run as the worker stored it (its model turns and tool calls with their
   * guard decisions; null when it ran outside the worker) and the run's audited calls in the caller's tenant.
   */
  @Get(':id/run')
  @ApiOperation({ summary: 'The agent run that made the proposal: its steps and its tool calls with their guard decisions' })
  @ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' } })
  @ApiOkResponse({ schema: PROPOSAL_RUN_SCHEMA })
  @ApiFieldError()
  @ApiNotFoundResponse({ description: "No such proposal in the caller's tenant", schema: HTTP_ERROR_SCHEMA })
  async run(@CurrentCaller() caller: AdminCaller, @Param('id', ParseIdPipe) id: string): Promise<ProposalRun> {
    const p = await this.pipeline.get(caller.tenantId, id);
    if (!p.runId) return { runId: null, run: null, calls: [] };
    // A run id is not proof of origin (an application may let a caller name it): the stored run is shown only when it
    // made this proposal, and the audited calls are the proposer's.
    const [run, calls] = await Promise.all([
      this.runs ? this.runs.get(caller.tenantId, p.runId) : Promise.resolve(null),
      this.audit
        ? this.audit.query({ tenantId: caller.tenantId, runId: p.runId, userId: p.proposer, limit: RUN_CALLS_LIMIT })
        : Promise.resolve([]),
    ]);
    return { runId: p.runId, run: run && madeProposal(run, p) ? this.runView(run, p.id) : null, calls };
  }

  /** What an approver sees of a stored run: no lease, no permissions; tool arguments redacted as anything over HTTP. */
  private runView(r: AgentRunRecord, proposalId: string): ProposalRunRecord {
    const redact = (v: unknown) => (this.redactor ? this.redactor.redact(v) : v);
    return {
      id: r.id,
      agent: r.agent,
      goal: this.redactor ? this.redactor.redactText(r.goal) : r.goal,
      status: r.status,
      answer: r.answer !== null && this.redactor ? this.redactor.redactText(r.answer) : r.answer,
      stoppedReason: r.stoppedReason,
      createdAt: r.createdAt,
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
      steps: r.steps.map((s) => ({
        index: s.index,
        text: this.redactor ? this.redactor.redactText(s.text) : s.text,
        toolCalls: s.toolCalls.map((c) => ({
          id: c.id,
          name: c.name,
          arguments: redact(c.arguments),
          decision: c.decision,
          cause: c.cause,
          outcome: c.outcome,
          ok: c.ok,
          durationMs: c.durationMs,
        })),
      })),
      waitingFor: r.status === 'waiting' ? [...(r.waitingFor ?? [])] : [],
      waitUntil: r.status === 'waiting' ? (r.waitUntil ?? null) : null,
      decisions: (r.decisions ?? []).map((d) => ({ proposalId: d.proposalId, status: d.status })),
      proposedAtStep: r.steps.find((s) => s.toolCalls.some((c) => c.ok && answeredProposal(c.observation, proposalId)))?.index ?? null,
    };
  }

  /**
   * Body: { reason, version, step, payload? }. version and step are what the approver read
   * (GET /admin/approvals/:id answers `version` and `waitingStep.index`); any other is a 409 with
   * the current ones, and nothing executes. `payload` (approve only) approves an edited payload.
   */
  @Post(':id/approve')
  @HttpCode(200)
  @ApiOperation({ summary: 'Approve the waiting step (with an edited payload, optionally); the last approval executes it' })
  @ApiDecision()
  @ApiUnprocessableEntityResponse({ description: 'The edited payload cannot apply', schema: FIELD_ERROR_SCHEMA })
  approve(
    @CurrentCaller() caller: AdminCaller,
    @Param('id', ParseIdPipe) id: string,
    @Body(ParseDecisionBodyPipe) body: DecisionBody,
  ): Promise<PipelineOutcome> {
    return this.pipeline.decide(caller, id, { decision: 'approve', ...body });
  }

  @Post(':id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject the proposal at its waiting step' })
  @ApiDecision()
  reject(
    @CurrentCaller() caller: AdminCaller,
    @Param('id', ParseIdPipe) id: string,
    @Body(ParseDecisionBodyPipe) body: DecisionBody,
  ): Promise<PipelineOutcome> {
    return this.pipeline.decide(caller, id, { decision: 'reject', ...body });
  }
}

/** Whether the stored run made the proposal: the proposer's run (of its agent) with a tool call that answered its id. */
function madeProposal(run: AgentRunRecord, p: ProposalRecord): boolean {
  if (run.userId !== p.proposer || (p.agent !== null && run.agent !== p.agent)) return false;
  return run.steps.some((step) => step.toolCalls.some((call) => call.ok && answeredProposal(call.observation, p.id)));
}

/**
 * Whether a tool call's observation is a pipeline outcome naming this proposal (`{ verdict, proposalId }`), or, in a
 * run that waited for it and went on, the decision it was told as that call's result (`{ proposalId, decision }`).
 */
function answeredProposal(observation: unknown, id: string): boolean {
  if (typeof observation !== 'string' || !observation.includes(id)) return false;
  try {
    const v: unknown = JSON.parse(observation);
    return (
      v !== null &&
      typeof v === 'object' &&
      (v as { proposalId?: unknown }).proposalId === id &&
      (typeof (v as { verdict?: unknown }).verdict === 'string' || typeof (v as { decision?: unknown }).decision === 'string')
    );
  } catch {
    return false;
  }
}
