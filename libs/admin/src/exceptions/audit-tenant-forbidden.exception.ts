import { AUDIT_TENANT_FORBIDDEN_MESSAGE } from '../admin.messages';

/** A tenant admin asked for the audit of another tenant (or of all tenants): a 403. */
export class AuditTenantForbiddenException extends Error {
  constructor() {
    super(AUDIT_TENANT_FORBIDDEN_MESSAGE);
    this.name = 'AuditTenantForbiddenException';
  }
}
