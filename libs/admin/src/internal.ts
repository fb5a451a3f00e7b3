// @zmodu/admin/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/admin and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { adminHttpException } from './admin-exception.filter';
export { CallerNotCheckedException } from './exceptions/caller-not-checked.exception';
export { AgentModuleMissingException } from './exceptions/agent-module-missing.exception';
export { InvalidAuditFilterException } from './exceptions/invalid-audit-filter.exception';
export { AuditTenantForbiddenException } from './exceptions/audit-tenant-forbidden.exception';
export { InvalidConfigWriteException } from './config/exceptions/invalid-config-write.exception';
export { InvalidAdminSkillsOptionsException } from './skills/exceptions/invalid-admin-skills-options.exception';
export { InvalidMetricsOptionsException } from './exceptions/invalid-metrics-options.exception';
export { CONSOLE_CSP } from './console/console.controller';
export { InvalidConsoleOptionsException } from './exceptions/invalid-console-options.exception';
export { ADMIN_CONFIG_STORE } from './skills/admin-skills.constants';
