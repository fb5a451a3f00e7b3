// The public API of @zmodu/admin. Anything not named here is internal.
export { AdminModule } from './admin.module';
export type { AdminModuleAsyncOptions, AdminModuleForRootOptions } from './admin.module-definition';
export { AdminModuleOptions, callerFromRequestUser } from './admin.options';
export type { AdminCaller, AdminModuleExtras, AdminPermissionOption } from './admin.options';
export { ADMIN_MAPPED_EXCEPTIONS, AdminExceptionFilter, adminHttpException } from './admin-exception.filter';
export { AdminPermissionGuard } from './admin-permission.guard';
export { RequireAdminPermission } from './require-admin-permission.decorator';
export { CurrentCaller } from './current-caller.decorator';
export { CallerNotCheckedException } from './exceptions/caller-not-checked.exception';
export { AgentModuleMissingException } from './exceptions/agent-module-missing.exception';
export type { AgentReport, AgentsReport } from './agents.controller';
export type { QuotaReport, QuotaReportItem } from './quota.controller';
export {
  AUDIT_CSV_COLUMNS,
  AUDIT_EXPORT_DEFAULT_LIMIT,
  AUDIT_EXPORT_KINDS,
  auditCsv,
  auditExportRow,
  parseAuditExport,
  readAuditPage,
} from './audit/audit-export';
export type {
  AuditExportFormat,
  AuditExportPage,
  AuditExportRequest,
  AuditExportRow,
  AuditExportScope,
  ParsedAuditExport,
} from './audit/audit-export';
export { InvalidAuditFilterException } from './exceptions/invalid-audit-filter.exception';
export { AuditTenantForbiddenException } from './exceptions/audit-tenant-forbidden.exception';
