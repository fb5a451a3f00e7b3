import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  ForbiddenException,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  UnprocessableEntityException,
} from '@nestjs/common';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  PipelineOutcome,
  ProposalConflictException,
  ProposalEditRefusedException,
  ProposalNotFoundException,
  ProposalPage,
  ProposalPipeline,
  ProposalRecord,
} from '@zmodu/pipeline';
import { adminCaller, intParam, textField } from './admin-request';
import { ADMIN_MODULE_OPTIONS, AdminCaller, AdminModuleOptions } from './admin.options';

/**
 * The human approval queue, per tenant: an admin sees and decides only the proposals of the
 * tenant in their token (another tenant's is a 404, as if it did not exist).
 */
@Controller('admin/approvals')
export class ApprovalsController {
  constructor(
    private readonly pipeline: ProposalPipeline,
    @Inject(ADMIN_MODULE_OPTIONS) private readonly options: AdminModuleOptions,
  ) {}

  @Get()
  list(
    @Req() req: unknown,
    @Query('status') status?: string,
    @Query('page') page?: string,
    @Query('limit') limit?: string,
  ): Promise<ProposalPage> {
    const caller = this.caller(req);
    return this.map(() =>
      this.pipeline.list(caller.tenantId, { status, page: intParam('page', page), limit: intParam('limit', limit, 1, 100) }),
    );
  }

  @Get(':id')
  get(@Req() req: unknown, @Param('id') id: string): Promise<ProposalRecord> {
    const caller = this.caller(req);
    return this.map(() => this.pipeline.get(caller.tenantId, id));
  }

  @Post(':id/approve')
  @HttpCode(200)
  approve(@Req() req: unknown, @Param('id') id: string, @Body() body: unknown): Promise<PipelineOutcome> {
    return this.decide(req, id, 'approve', body);
  }

  @Post(':id/reject')
  @HttpCode(200)
  reject(@Req() req: unknown, @Param('id') id: string, @Body() body: unknown): Promise<PipelineOutcome> {
    return this.decide(req, id, 'reject', body);
  }

  /**
   * Body: { reason, version, step, payload? }. version and step are what the approver read
   * (GET /admin/approvals/:id answers `version` and `waitingStep.index`); any other is a 409 with
   * the current ones, and nothing executes. `payload` (approve only) approves an edited payload.
   */
  private decide(req: unknown, id: string, decision: 'approve' | 'reject', body: unknown): Promise<PipelineOutcome> {
    const caller = this.caller(req);
    const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as {
      reason?: unknown;
      version?: unknown;
      step?: unknown;
      payload?: unknown;
    };
    const reason = textField('reason', b.reason, 'say why');
    if (typeof b.version !== 'number')
      throw new BadRequestException({
        message: 'version must be the version of the proposal you read (GET /admin/approvals/:id answers it)',
        field: 'version',
      });
    if (typeof b.step !== 'number')
      throw new BadRequestException({
        message: 'step must be the index of the step you decide (waitingStep.index of the proposal you read)',
        field: 'step',
      });
    const input = { decision, reason, version: b.version, step: b.step, ...(b.payload !== undefined ? { payload: b.payload } : {}) };
    return this.map(() => this.pipeline.decide(caller, id, input));
  }

  private caller(req: unknown): AdminCaller {
    return adminCaller(this.options, req, this.options.decidePermission ?? 'approval:decide');
  }

  private async map<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof InvalidProposalException) throw new BadRequestException({ message: err.message, field: err.field });
      if (err instanceof ProposalNotFoundException) throw new NotFoundException(err.message);
      if (err instanceof ProposalConflictException)
        throw new ConflictException({ message: err.message, status: err.status, current: err.current ?? null });
      if (err instanceof ProposalEditRefusedException)
        throw new UnprocessableEntityException({ message: err.message, field: err.field ?? null });
      if (err instanceof ApprovalForbiddenException) throw new ForbiddenException(err.message);
      throw err;
    }
  }
}
