import { Controller, ForbiddenException, Get, Headers, NotImplementedException, Query, Res, UseFilters } from '@nestjs/common';
import { ApiNotImplementedResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from './swagger-decorators';
import { AUDIT_QUERY_MAX_LIMIT } from '@zmodu/guard/internal';
import { AuditChainVerdict, AuditLogStore, InjectAuditLogStore } from '@zmodu/guard';
import type { Response } from 'express';
import { AdminExceptionFilter } from './admin-exception.filter';
import { AUDIT_CHAIN_NOT_KEPT_MESSAGE, AUDIT_OTHER_TENANT_MESSAGE } from './admin.messages';
import {
  ApiAuditFilters,
  ApiFieldError,
  ApiOwnTenantQuery,
  AUDIT_PAGE_SCHEMA,
  AUDIT_VERDICT_SCHEMA,
  HTTP_ERROR_SCHEMA,
} from './admin.openapi';
import { AdminCaller } from './admin.options';
import { AUDIT_EXPORT_KINDS, AuditExportPage, auditCsv, parseAuditExport, readAuditPage } from './audit/audit-export';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

/** A file name part from a tenant id: its safe characters only. */
const fileSafe = (tenantId: string): string => tenantId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64);

/**
 * The audit, per tenant: `GET /admin/audit` pages through the entries of the caller's tenant (filters: kind, decision,
 * skill, agent, run, user, since, until; `limit` and `cursor`), as JSON `{ entries, nextCursor }` or, with
 * `format=csv` or `Accept: text/csv`, as a CSV attachment whose next cursor is the `X-Next-Cursor` header; a bad filter
 * is a 400 naming it. `GET /admin/audit/verify` walks the hash chain of the caller's tenant and answers
 * `{ ok: true, entries, head }` or `{ ok: false, firstBadSequence, problem }`. A tenant admin verifies only its own
 * tenant: `?tenant=` naming another one is a 403. The permission is the `auditPermission` option.
 */
@ApiTags('admin: audit')
@Controller('admin/audit')
@RequireAdminPermission('auditPermission')
@UseFilters(AdminExceptionFilter)
export class AuditController {
  constructor(@InjectAuditLogStore() private readonly store: AuditLogStore) {}

  @Get()
  @ApiOperation({
    summary: "The audit of the caller's tenant, oldest first, a page at a time, as JSON or CSV",
    description: 'Each entry carries the redacted arguments and result of its call. Page on with ?cursor=<nextCursor>.',
  })
  @ApiOwnTenantQuery()
  @ApiAuditFilters(AUDIT_EXPORT_KINDS, AUDIT_QUERY_MAX_LIMIT)
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    description: 'A page of entries: JSON, or CSV (RFC 4180) with the next cursor in X-Next-Cursor',
    content: {
      'application/json': { schema: AUDIT_PAGE_SCHEMA },
      'text/csv': { schema: { type: 'string', description: 'A header line, then one line per entry' } },
    },
    headers: {
      'X-Next-Cursor': { description: 'CSV: the cursor of the next page (absent on the last page)', schema: { type: 'string' } },
      'Content-Disposition': { description: 'CSV: attachment; filename="audit-<tenant>-<date>.csv"', schema: { type: 'string' } },
    },
  })
  @ApiFieldError('A filter cannot be read (or is unknown): the answer names it')
  async list(
    @CurrentCaller() caller: AdminCaller,
    @Query() query: Record<string, unknown>,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AuditExportPage | string> {
    const csvAccepted = typeof accept === 'string' && /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept);
    const filters = query.format === undefined && csvAccepted ? { ...query, format: 'csv' } : query;
    const parsed = parseAuditExport(filters, { tenantId: caller.tenantId });
    const page = await readAuditPage(this.store, parsed);
    if (parsed.format === 'json') return page;
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    const day = new Date().toISOString().slice(0, 10);
    res.setHeader('Content-Disposition', `attachment; filename="audit-${fileSafe(caller.tenantId)}-${day}.csv"`);
    if (page.nextCursor !== null) res.setHeader('X-Next-Cursor', page.nextCursor);
    return auditCsv(page.entries);
  }

  @Get('verify')
  @ApiOperation({ summary: "Verify the audit hash chain of the caller's tenant: the first altered, deleted, inserted or re-linked entry" })
  @ApiOwnTenantQuery()
  @ApiOkResponse({ schema: AUDIT_VERDICT_SCHEMA })
  @ApiNotImplementedResponse({ description: 'The audit store keeps no hash chain', schema: HTTP_ERROR_SCHEMA })
  verify(@CurrentCaller() caller: AdminCaller, @Query('tenant') tenant?: string): Promise<AuditChainVerdict> {
    if (tenant !== undefined && tenant !== caller.tenantId) throw new ForbiddenException(AUDIT_OTHER_TENANT_MESSAGE);
    if (!this.store.verify) throw new NotImplementedException(AUDIT_CHAIN_NOT_KEPT_MESSAGE);
    return this.store.verify(caller.tenantId);
  }
}
