import { AuditBatchOptions } from './audit/agent-audit-log';
import { AuditLogStore } from './audit/audit-log.store';
import { RedactionOptions } from './redaction/redaction-options';
import { TokenQuotaOptions } from './quota/token-quota';
import { TokenQuotaStore } from './quota/token-quota.store';

/**
 * Where the guard keeps its audit trail and token counters.
 * - 'typeorm' (default): tables `zmodu_audit_log` and `zmodu_token_usage` through the app's TypeORM DataSource
 *   (add `ZMODU_GUARD_ENTITIES` and `ZMODU_GUARD_MIGRATIONS` to it).
 * - 'memory': in process, lost on restart (tests, prototypes).
 * - an object implementing the port: your own store.
 */
export type StoreChoice<T> = 'typeorm' | 'memory' | T;

export class GuardModuleOptions {
  auditStore?: StoreChoice<AuditLogStore> = 'typeorm';
  quotaStore?: StoreChoice<TokenQuotaStore> = 'typeorm';
  audit?: AuditBatchOptions = {};
  quota?: TokenQuotaOptions = {};
  /** What every tool call's arguments and result are cleaned of before the model, the audit, the logs and HTTP see them (see RedactionOptions). */
  redaction?: RedactionOptions = {};
}
