import { Inject } from '@nestjs/common';

/** Public token: the `AuditLogStore` the audit log writes to. Provide your own through GuardModule options. */
export const AUDIT_LOG_STORE = Symbol('zmodu:AUDIT_LOG_STORE');
/** Public token: the `TokenQuotaStore` the quota reads and charges. */
export const TOKEN_QUOTA_STORE = Symbol('zmodu:TOKEN_QUOTA_STORE');

export const InjectAuditLogStore = () => Inject(AUDIT_LOG_STORE);
export const InjectTokenQuotaStore = () => Inject(TOKEN_QUOTA_STORE);
