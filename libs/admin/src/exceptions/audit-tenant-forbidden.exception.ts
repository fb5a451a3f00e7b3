import { AUDIT_TENANT_FORBIDDEN_MESSAGE } from '../admin.messages';
import { ZmoduError } from '@zmodu/core';

/** A tenant admin asked for the audit of another tenant (or of all tenants): a 403. */
export class AuditTenantForbiddenException extends ZmoduError {
  constructor() {
    super(AUDIT_TENANT_FORBIDDEN_MESSAGE);
    this.name = 'AuditTenantForbiddenException';
  }
}
