import { applyDecorators, Body, Controller, Get, HttpCode, Param, Post, Query, UseFilters } from '@nestjs/common';
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
} from '@nestjs/swagger';
import { PipelineOutcome, ProposalPage, ProposalPipeline, ProposalRecord } from '@zmodu/pipeline';
import { AdminExceptionFilter } from './admin-exception.filter';
import {
  ApiFieldError,
  ApiPageQuery,
  CONFLICT_SCHEMA,
  DECISION_BODY_SCHEMA,
  FIELD_ERROR_SCHEMA,
  HTTP_ERROR_SCHEMA,
  PIPELINE_OUTCOME_SCHEMA,
  PROPOSAL_PAGE_SCHEMA,
  PROPOSAL_SCHEMA,
} from './admin.openapi';
import { AdminCaller } from './admin.options';
import { DecisionBody, OptionalIntPipe, ParseDecisionBodyPipe, ParseIdPipe } from './admin.pipes';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

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
  constructor(private readonly pipeline: ProposalPipeline) {}

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
