import { Body, Controller, Get, HttpCode, Param, Post, Query, UseFilters } from '@nestjs/common';
import { PipelineOutcome, ProposalPage, ProposalPipeline, ProposalRecord } from '@zmodu/pipeline';
import { AdminExceptionFilter } from './admin-exception.filter';
import { AdminCaller } from './admin.options';
import { DecisionBody, OptionalIntPipe, ParseDecisionBodyPipe, ParseIdPipe } from './admin.pipes';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

/**
 * The human approval queue, per tenant: an admin sees and decides only the proposals of the
 * tenant in their token (another tenant's is a 404, as if it did not exist). The permission is
 * the `decidePermission` option; pipeline exceptions become status codes in AdminExceptionFilter.
 */
@Controller('admin/approvals')
@RequireAdminPermission('decidePermission')
@UseFilters(AdminExceptionFilter)
export class ApprovalsController {
  constructor(private readonly pipeline: ProposalPipeline) {}

  @Get()
  list(
    @CurrentCaller() caller: AdminCaller,
    @Query('status') status?: string,
    @Query('page', new OptionalIntPipe()) page?: number,
    @Query('limit', new OptionalIntPipe(1, 100)) limit?: number,
  ): Promise<ProposalPage> {
    return this.pipeline.list(caller.tenantId, { status, page, limit });
  }

  @Get(':id')
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
  approve(
    @CurrentCaller() caller: AdminCaller,
    @Param('id', ParseIdPipe) id: string,
    @Body(ParseDecisionBodyPipe) body: DecisionBody,
  ): Promise<PipelineOutcome> {
    return this.pipeline.decide(caller, id, { decision: 'approve', ...body });
  }

  @Post(':id/reject')
  @HttpCode(200)
  reject(
    @CurrentCaller() caller: AdminCaller,
    @Param('id', ParseIdPipe) id: string,
    @Body(ParseDecisionBodyPipe) body: DecisionBody,
  ): Promise<PipelineOutcome> {
    return this.pipeline.decide(caller, id, { decision: 'reject', ...body });
  }
}
