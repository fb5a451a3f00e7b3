import { Controller, ForbiddenException, Get, NotImplementedException, Query } from '@nestjs/common';
import { ApiNotImplementedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuditChainVerdict, AuditLogStore, InjectAuditLogStore } from '@zmodu/guard';
import { AUDIT_CHAIN_NOT_KEPT_MESSAGE, AUDIT_OTHER_TENANT_MESSAGE } from './admin.messages';
import { ApiOwnTenantQuery, AUDIT_VERDICT_SCHEMA, HTTP_ERROR_SCHEMA } from './admin.openapi';
import { AdminCaller } from './admin.options';
import { CurrentCaller } from './current-caller.decorator';
import { RequireAdminPermission } from './require-admin-permission.decorator';

/**
 * The audit, per tenant: `GET /admin/audit/verify` walks the hash chain of the caller's tenant and answers
 * `{ ok: true, entries, head }` or `{ ok: false, firstBadSequence, problem }`. A tenant admin verifies only its own
 * tenant: `?tenant=` naming another one is a 403. The permission is the `auditPermission` option.
 */
@ApiTags('admin: audit')
@Controller('admin/audit')
@RequireAdminPermission('auditPermission')
export class AuditController {
  constructor(@InjectAuditLogStore() private readonly store: AuditLogStore) {}

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
