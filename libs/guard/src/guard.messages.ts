export const INVALID_POLICY_MESSAGE = (what: string) =>
  `Invalid guard policy: ${what}. A policy is { allow: string[], deny?: string[], allowExecute?: boolean, budget?: number }.`;

export const INVALID_COST_MESSAGE = (cost: unknown) => `Guard.check cost must be a finite number >= 0 (got ${String(cost)}).`;

export const AUDIT_STORE_CANNOT_VERIFY_MESSAGE =
  'verifyAuditChain: this audit store keeps no hash chain (it has no verify method). ' +
  'Use TypeOrmAuditLogStore or InMemoryAuditLogStore, or give your store a verify(tenantId) of its own.';
export const INVALID_REDACTION_MESSAGE = (what: string) =>
  `Invalid guard redaction options: ${what}. Redaction is { secrets?: boolean, cards?: boolean, emails?: boolean, ` +
  `patterns?: Array<RegExp | string>, replacement?: string } (see RedactionOptions).`;
