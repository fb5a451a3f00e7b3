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
} from '@nestjs/common';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  PipelineOutcome,
  ProposalConflictException,
  ProposalNotFoundException,
  ProposalPage,
  ProposalPipeline,
  ProposalRecord,
} from '@zmodu/pipeline';
import { adminCaller, intParam } from './admin-request';
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
  list(@Req() req: unknown, @Query('status') status?: string, @Query('page') page?: string, @Query('limit') limit?: string): Promise<ProposalPage> {
    const caller = this.caller(req);
    return this.map(() => this.pipeline.list(caller.tenantId, { status, page: intParam('page', page), limit: intParam('limit', limit, 1, 100) }));
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

  private decide(req: unknown, id: string, decision: 'approve' | 'reject', body: unknown): Promise<PipelineOutcome> {
    const caller = this.caller(req);
    const reason = body && typeof body === 'object' ? (body as { reason?: unknown }).reason : undefined;
    if (typeof reason !== 'string') throw new BadRequestException({ message: 'reason must be a non-empty string: say why', field: 'reason' });
    return this.map(() => this.pipeline.decide(caller, id, decision, reason));
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
      if (err instanceof ProposalConflictException) throw new ConflictException({ message: err.message, status: err.status });
      if (err instanceof ApprovalForbiddenException) throw new ForbiddenException(err.message);
      throw err;
    }
  }
}
