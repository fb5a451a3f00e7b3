import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { AGENT_JOB_STORE, type AgentJobStore } from '@zmodu/agent';
import { CallerContext, type HttpCallerContext, RequireCaller } from '@zmodu/http';
import { PERMISSIONS } from '../auth/auth.constants';
import { RequirePermission } from '../auth/require-permission.decorator';

/** The scheduled jobs of the caller's tenant: the static ones (@AgentJob) and those scheduled with schedule_job. */
@ApiTags('jobs')
@ApiBearerAuth()
@Controller('jobs')
@RequireCaller()
export class JobsController {
  constructor(@Inject(AGENT_JOB_STORE) private readonly store: AgentJobStore) {}

  /** Each job as stored (the user it runs as, the permissions its runs get, its last tick), without the tenant. */
  @Get()
  @RequirePermission(PERMISSIONS.jobRead)
  async list(@CallerContext() caller: HttpCallerContext) {
    const jobs = await this.store.list(caller.tenantId);
    return jobs.map(({ tenantId: _tenant, cancelledAt: _cancelled, ...job }) => job);
  }
}
