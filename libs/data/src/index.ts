// The public API of @zmodu/data. Internals (the printer, the allow lists, the placeholder lexer,
// the entity writer, fence internals) stay unexported.

// The module and its options
export { DataSkillsModule } from './data-skills.module';
export { BusinessSkillsModule } from './business-skills.module';
export {
  BUSINESS_SKILLS_OPTIONS,
  DATA_SKILLS_MODULE_OPTIONS,
  DATA_SKILLS_OPTIONS,
  InjectDataSkillsOptions,
} from './data-skills.module-definition';
export { BUSINESS_SKILL_NAMES, DataSkillsOptions, MAX_ROWS_CAP, WRITE_SKILL_NAMES } from './data-skills.options';
export type {
  BusinessSkillName,
  BusinessSkillsOptions,
  DataFenceOptions,
  DataLimits,
  DataSkillsModuleOptions,
  EntitySpec,
  KpiMetric,
  ReportSpec,
} from './data-skills.options';
export { BusinessSkills } from './business-skills';

// Exceptions and their messages
export {
  DataException,
  DataModelHazardException,
  FenceMissingException,
  InvalidDataOptionsException,
  InvalidIdentifierException,
  SqlParserNotLoadedException,
  TenantFenceError,
} from './exceptions';
export { DataMessages } from './data.messages';

// db.query's SQL guard, usable on its own
export { MAX_ARG_LENGTH, MAX_ARGS, MAX_SQL_LENGTH, SqlGuard } from './sql/sql-guard';
export type { PreparedQuery, PrepareInput, QueryableTable, SqlGuardOptions } from './sql/sql-guard';
export { SqlRefusal } from './sql/sql-refusal';
export { loadSqlParser } from './sql/pg-parser';
export { DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS, runReadOnly } from './query/read-only-query';
export type { ReadOnlyFence, ReadOnlyLimits, ReadOnlyResult } from './query/read-only-query';
export { toCsv } from '@zmodu/skills';

// db.query's second fence
export {
  DEFAULT_FENCE_ROLE,
  fenceTablesFor,
  installTenantFence,
  tenantFenceMigration,
  tenantFenceStatus,
  uninstallTenantFence,
} from './fence/tenant-fence';
export type { FenceAction, FenceStatus, FenceTable, SqlRunner, TenantFenceOptions } from './fence/tenant-fence';

// The data-model audit
export { auditDataModel } from './audit/data-audit';
export type { AuditedEntity, DataAudit, DataFinding, DataFindingCode } from './audit/data-audit';
