export * from './business-skills.options';
export { BUSINESS_SKILLS_OPTIONS } from './business-skills.module-definition';
export * from './business-skills.module';
export * from './business-skills';
export * from './sql/sql-guard';
export * from './sql/sql-refusal';
export { loadSqlParser } from './sql/pg-parser';
export * from './query/read-only-query';
export { toCsv } from './csv';
export {
  DEFAULT_FENCE_ROLE,
  fenceTablesFor,
  installTenantFence,
  TenantFenceError,
  tenantFenceMigration,
  tenantFenceStatus,
  uninstallTenantFence,
} from './fence/tenant-fence';
export type { FenceAction, FenceStatus, FenceTable, SqlRunner, TenantFenceOptions } from './fence/tenant-fence';
export { auditDataModel } from './audit/data-audit';
export type { AuditedEntity, DataAudit, DataFinding, DataFindingCode } from './audit/data-audit';
