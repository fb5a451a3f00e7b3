import { AuditBatchOptions } from './audit/agent-audit-log';
import { AuditLogStore } from './audit/audit-log.store';
import { RedactionOptions } from './redaction/redaction-options';
import { TokenQuotaOptions } from './quota/token-quota';
import { TokenQuotaStore } from './quota/token-quota.store';

import type { StoreChoice } from '@zmodu/core';

/**
 * Options of GuardModule.forRoot (and of AgentModule's `guard`). Where the guard keeps its audit trail and token
 * counters is a StoreChoice: 'typeorm' (the default: tables `zmodu_audit_log` and `zmodu_token_usage` through the app's
 * TypeORM DataSource, created by `zmoduMigrations()`), 'memory' (in process, lost on restart), or a store of your own.
 */
export class GuardModuleOptions {
  auditStore?: StoreChoice<AuditLogStore> = 'typeorm';
  quotaStore?: StoreChoice<TokenQuotaStore> = 'typeorm';
  audit?: AuditBatchOptions = {};
  quota?: TokenQuotaOptions = {};
  /** What every tool call's arguments and result are cleaned of before the model, the audit, the logs and HTTP see them (see RedactionOptions). */
  redaction?: RedactionOptions = {};
}
