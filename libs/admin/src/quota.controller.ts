import { BadRequestException, Controller, ForbiddenException, Get, NotImplementedException, Query } from '@nestjs/common';
import { ApiNotImplementedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from './swagger-decorators';
import { InjectTokenQuotaStore, TokenQuota, TokenQuotaStore } from '@zmodu/guard';
import { QUOTA_USAGE_MAX_LIMIT } from '@zmodu/guard/internal';
import { QUOTA_OTHER_TENANT_MESSAGE, QUOTA_USAGE_NOT_KEPT_MESSAGE } from './admin.messages';
import { ApiFieldError, ApiOwnTenantQuery, HTTP_ERROR_SCHEMA, QUOTA_REPORT_SCHEMA } from './admin.openapi';
import { AdminCaller } from './admin.options';
import { OptionalIntPipe, OptionalNamePipe } from './admin.pipes';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

/** A period's name as TokenQuota writes it: a day, a month, or 'total'. */
const PERIOD = /^(?:\d{4}-\d{2}(?:-\d{2})?|total)$/;

/** One counter in GET /admin/quota. */
export interface QuotaReportItem {
  readonly agent: string;
  readonly period: string;
  readonly tokens: number;
  /** The tenant's limit per period for the agent; null when unlimited. */
  readonly limit: number | null;
  readonly remaining: number | null;
  /** What one user may spend per period (fair use); null when no share applies. */
  readonly userLimit: number | null;
  readonly users: ReadonlyArray<{ readonly userId: string; readonly tokens: number }>;
}

/** The answer of GET /admin/quota. */
export interface QuotaReport {
  readonly tenantId: string;
  /** The quota's current period (the default `period` filter). */
  readonly currentPeriod: string;
  readonly items: QuotaReportItem[];
}

const finite = (n: number): number | null => (Number.isFinite(n) ? n : null);

/**
 * Token usage of the caller's tenant per agent and period, with each user's share, from the guard's quota store. A
 * tenant admin sees only its own tenant: `?tenant=` naming another one is a 403. The permission is the `quotaPermission`
 * option; a quota store that cannot list its counters is a 501.
 */
@ApiTags('admin: quota')
@Controller('admin/quota')
@RequireAdminPermission('quotaPermission')
export class QuotaController {
  constructor(
    @InjectTokenQuotaStore() private readonly store: TokenQuotaStore,
    private readonly quota: TokenQuota,
  ) {}

  @Get()
  @ApiOperation({ summary: "Token usage of the caller's tenant per agent and period, with each user's share and the limits" })
  @ApiOwnTenantQuery()
  @ApiQuery({ name: 'agent', required: false, description: 'Only this agent', schema: { type: 'string', maxLength: 200 } })
  @ApiQuery({
    name: 'period',
    required: false,
    description: "A period ('2026-11-30', '2026-11' or 'total', as the quota counts them), or 'all'. Default: the current period",
    schema: { type: 'string' },
  })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: QUOTA_USAGE_MAX_LIMIT, default: 100 } })
  @ApiOkResponse({ schema: QUOTA_REPORT_SCHEMA })
  @ApiFieldError()
  @ApiNotImplementedResponse({ description: 'The quota store cannot list its counters', schema: HTTP_ERROR_SCHEMA })
  async usage(
    @CurrentCaller() caller: AdminCaller,
    @Query('tenant') tenant?: unknown,
    @Query('agent', new OptionalNamePipe()) agent?: string,
    @Query('period') period?: unknown,
    @Query('limit', new OptionalIntPipe(1, QUOTA_USAGE_MAX_LIMIT)) limit?: number,
  ): Promise<QuotaReport> {
    if (tenant !== undefined && tenant !== caller.tenantId) throw new ForbiddenException(QUOTA_OTHER_TENANT_MESSAGE);
    if (period !== undefined && period !== 'all' && !(typeof period === 'string' && PERIOD.test(period)))
      throw new BadRequestException({
        message: "period must be a day (2026-11-30), a month (2026-11), 'total' or 'all', given once",
        field: 'period',
      });
    if (!this.store.usage) throw new NotImplementedException(QUOTA_USAGE_NOT_KEPT_MESSAGE);
    const currentPeriod = this.quota.currentPeriod();
    const rows = await this.store.usage(caller.tenantId, {
      agent,
      period: period === 'all' ? undefined : ((period as string | undefined) ?? currentPeriod),
      limit,
    });
    const items = rows.map((r): QuotaReportItem => {
      const key = { tenantId: caller.tenantId, agent: r.agent };
      const max = this.quota.limitFor(key);
      return {
        agent: r.agent,
        period: r.period,
        tokens: r.tokens,
        limit: finite(max),
        remaining: finite(Math.max(0, max - r.tokens)),
        userLimit: finite(this.quota.userLimitFor(key)),
        users: r.users,
      };
    });
    return { tenantId: caller.tenantId, currentPeriod, items };
  }
}
