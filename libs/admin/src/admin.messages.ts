export const CALLER_NOT_CHECKED_MESSAGE = () =>
  '@CurrentCaller() needs @RequireAdminPermission(...) on the endpoint or its controller: only a checked caller is handed out.';

export const AUDIT_OTHER_TENANT_MESSAGE = 'A tenant admin verifies only the audit of its own tenant: leave out ?tenant= or name yours.';

export const AUDIT_CHAIN_NOT_KEPT_MESSAGE =
  'This audit store keeps no hash chain (no verify method): use the TypeORM or in-memory audit store of @zmodu/guard.';

export const METRICS_OPTION_MESSAGE = (field: string, problem: string) => `MetricsModule option '${field}' ${problem}.`;

export const METRICS_FORBIDDEN_MESSAGE =
  'This scrape is not authorized: send the credentials that the `authorize` option of MetricsModule expects.';
