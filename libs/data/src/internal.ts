// @zmodu/data/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/data and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export type { BusinessSkillName, DataFenceOptions, DataLimits, KpiMetric } from './data-skills.options';
export {
  DataException,
  DataModelHazardException,
  InvalidDataOptionsException,
  InvalidIdentifierException,
  SqlParserNotLoadedException,
  TenantFenceError,
} from './exceptions';
export { SqlGuard } from './sql/sql-guard';
export { loadSqlParser } from './sql/pg-parser';
export type { FenceTable } from './fence/tenant-fence';
export { DATA_SKILLS_OPTIONS } from './data-skills.module-definition';
