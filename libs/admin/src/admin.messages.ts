export const CALLER_NOT_CHECKED_MESSAGE = () =>
  '@CurrentCaller() needs @RequireAdminPermission(...) on the endpoint or its controller: only a checked caller is handed out.';

export const AUDIT_OTHER_TENANT_MESSAGE = 'A tenant admin verifies only the audit of its own tenant: leave out ?tenant= or name yours.';

export const AUDIT_CHAIN_NOT_KEPT_MESSAGE =
  'This audit store keeps no hash chain (no verify method): use the TypeORM or in-memory audit store of @zmodu/guard.';

export const AGENT_MODULE_MISSING_MESSAGE = () =>
  'AdminModule serves GET /admin/agents (agents: true) from the agents of AgentModule, which this application does not import: ' +
  'import AgentModule.forRoot({ agents }) or leave agents: true out of AdminModule.forRoot.';

export const QUOTA_OTHER_TENANT_MESSAGE = 'A tenant admin sees only the token usage of its own tenant: leave out ?tenant= or name yours.';

export const QUOTA_USAGE_NOT_KEPT_MESSAGE =
  'This token quota store cannot list its counters (no usage method): use the TypeORM or in-memory quota store of @zmodu/guard.';

export const AUDIT_TENANT_FORBIDDEN_MESSAGE =
  'A tenant admin reads only the audit of its own tenant: leave out the tenant filter or name yours (reading other tenants needs the allTenants scope).';

export const METRICS_OPTION_MESSAGE = (field: string, problem: string) => `MetricsModule option '${field}' ${problem}.`;

export const METRICS_FORBIDDEN_MESSAGE =
  'This scrape is not authorized: send the credentials that the `authorize` option of MetricsModule expects.';

export const CONSOLE_OPTION_MESSAGE = (field: string, problem: string) => `AdminModule console option '${field}' ${problem}.`;

export const CONSOLE_NOT_BUILT_MESSAGE =
  'The approvals console is not built: run `npm run build` (it runs `vite build` for libs/admin/console), or give consoleOptions.root.';

export const NO_ADMIN_CALLER_MESSAGE = 'No authenticated caller with a tenant: send a bearer token.';

/** A caller whose tenant or user id scopeIdProblem refuses (the problem names which). */
export const ADMIN_CALLER_ID_MESSAGE = (problem: string) => `Unauthorized: ${problem}; the caller's ids come from its authentication.`;
