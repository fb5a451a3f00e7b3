// The public API of @zmodu/data. Internals (the printer, the allow lists, the placeholder lexer,
// the entity writer, fence internals) stay unexported.
export { DataSkillsModule } from './data-skills.module';
export { BusinessSkillsModule } from './business-skills.module';
export { BUSINESS_SKILL_NAMES, DataSkillsOptions, WRITE_SKILL_NAMES } from './data-skills.options';
export type { BusinessSkillsOptions, DataSkillsModuleOptions, EntitySpec, ReportSpec } from './data-skills.options';
export { BusinessSkills } from './business-skills';
export { FenceMissingException } from './exceptions';
export { SqlRefusal } from './sql/sql-refusal';
export { fenceTablesFor, installTenantFence, tenantFenceMigration, tenantFenceStatus, uninstallTenantFence } from './fence/tenant-fence';
export type { FenceStatus, TenantFenceOptions } from './fence/tenant-fence';
export { auditDataModel } from './audit/data-audit';
export type { DataAudit } from './audit/data-audit';
export { ZmoduError } from '@zmodu/core';
