export const INVALID_POLICY_MESSAGE = (what: string) =>
  `Invalid guard policy: ${what}. A policy is { allow: string[], deny?: string[], allowExecute?: boolean, budget?: number }.`;

export const INVALID_COST_MESSAGE = (cost: unknown) => `Guard.check cost must be a finite number >= 0 (got ${String(cost)}).`;

export const MISSING_DATA_SOURCE_MESSAGE =
  `@zmodu/guard: no TypeORM DataSource was found for the audit log and token quota. ` +
  `Import TypeOrmModule.forRoot({...}) with ZMODU_GUARD_ENTITIES and ZMODU_GUARD_MIGRATIONS, ` +
  `or pass auditStore/quotaStore: 'memory' (or a store of your own) in the guard options.`;

export const AUDIT_STORE_CANNOT_VERIFY_MESSAGE =
  'verifyAuditChain: this audit store keeps no hash chain (it has no verify method). ' +
  'Use TypeOrmAuditLogStore or InMemoryAuditLogStore, or give your store a verify(tenantId) of its own.';
export const INVALID_REDACTION_MESSAGE = (what: string) =>
  `Invalid guard redaction options: ${what}. Redaction is { secrets?: boolean, cards?: boolean, emails?: boolean, ` +
  `patterns?: Array<RegExp | string>, replacement?: string } (see RedactionOptions).`;
