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
// Admin skills (AdminSkillsModule) and the config store.
export { AdminSkillsModule } from './skills/admin-skills.module';
export type { AdminSkillsModuleAsyncOptions, AdminSkillsModuleForRootOptions } from './skills/admin-skills.module-definition';
export { ADMIN_SKILL_PERMISSION_KEYS, AdminSkillsModuleOptions, DEFAULT_ADMIN_SKILL_PERMISSIONS } from './skills/admin-skills.options';
export type {
  AdminAuditExportOptions,
  AdminDelegatedCallback,
  AdminDelegatedRequest,
  AdminSkillPermissionKey,
  AdminSkillPermissions,
} from './skills/admin-skills.options';
export { defaultTenantKey } from './skills/admin-cache';
export type { AdminCache, AdminCacheSpec } from './skills/admin-cache';
export { MAX_INVALIDATE_KEYS } from './skills/admin-cache.skills';
export { CONFIG_SKILL_REASONS } from './skills/admin-config.skills';
export { ADMIN_CONFIG_STORE, InjectAdminConfigStore } from './skills/admin-skills.constants';
export { AdminConfig } from './config/admin-config.service';
export type { ConfigSetResult } from './config/admin-config.service';
export type { AdminConfigStore } from './config/admin-config.store';
export type {
  AdminConfigOptions,
  ConfigEntry,
  ConfigKeySpec,
  ConfigKeyView,
  ConfigValueType,
  ConfigWrite,
  ConfigWriteResult,
} from './config/admin-config.types';
export { CONFIG_KEY_PATTERN, MAX_CONFIG_KEY_LENGTH, MAX_CONFIG_VALUE_CHARS } from './config/config-write';
export { InMemoryAdminConfigStore } from './config/in-memory-admin-config.store';
export { TypeOrmAdminConfigStore } from './config/typeorm-admin-config.store';
export { AdminConfigEntity } from './config/admin-config.entity';
export { ZMODU_ADMIN_ENTITIES, ZMODU_ADMIN_MIGRATIONS } from './config/admin-config.migration';
export { adminConfigStoreContract } from './config/admin-config-store.contract';
export type { AdminConfigStoreHarness } from './config/admin-config-store.contract';
export { ConfigVersionConflictException } from './config/exceptions/config-version-conflict.exception';
export { ConfigKeyUndeclaredException } from './config/exceptions/config-key-undeclared.exception';
export { ConfigKeyImmutableException } from './config/exceptions/config-key-immutable.exception';
export { InvalidConfigValueException } from './config/exceptions/invalid-config-value.exception';
export { InvalidConfigWriteException } from './config/exceptions/invalid-config-write.exception';
export { InvalidAdminSkillsOptionsException } from './skills/exceptions/invalid-admin-skills-options.exception';
export { AdminDataSourceMissingException } from './skills/exceptions/admin-data-source-missing.exception';
export { MetricsModule } from './metrics/metrics.module';
export type { MetricsModuleAsyncOptions, MetricsModuleForRootOptions } from './metrics/metrics.module-definition';
export {
  DEFAULT_MAX_TENANT_LABELS,
  DEFAULT_RUN_DURATION_BUCKETS,
  MetricsModuleOptions,
  OVERFLOW_TENANT_LABEL,
  UNKNOWN_SKILL_LABEL,
} from './metrics/metrics.options';
export type { MetricsAccess, MetricsModuleExtras, MetricsTenantView } from './metrics/metrics.options';
export { TENANT_LABEL, ZmoduMetrics } from './metrics/zmodu-metrics';
export type { MetricsView } from './metrics/zmodu-metrics';
export type { MetricsRegistry } from './metrics/metrics-registry';
export { InvalidMetricsOptionsException } from './exceptions/invalid-metrics-options.exception';
export { ZmoduHealthModule } from './health/health.module';
export { OutboxHealthIndicator } from './health/outbox.health';
export type { OutboxHealthLimits } from './health/outbox.health';
export { GoalQueueHealthIndicator } from './health/goal-queue.health';
export type { ProbedGoalQueue } from './health/goal-queue.health';
export { ConsoleController, CONSOLE_CSP } from './console/console.controller';
export type { ConsoleConfig, ConsoleSession } from './console/console.types';
export { CONSOLE_TOKEN_HANDOFF_KEY } from './console/console.options';
export type { AdminConsoleOptions } from './console/console.options';
export { InvalidConsoleOptionsException } from './exceptions/invalid-console-options.exception';
export { ADMIN_PUBLIC_ROUTE } from './admin.constants';
export type { ProposalRun, ProposalRunRecord } from './approvals.controller';
