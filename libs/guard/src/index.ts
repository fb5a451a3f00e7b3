// The public API of @zmodu/guard: the guard and its policies and decisions, auditPolicy, the audit
// log and the token quota (ports, stores, entities, migrations) and GuardModule.
export { Guard } from './guard';
export type { GuardOptions } from './guard';
export type { GuardPolicy } from './guard-policy';
export { ALLOWED, DENIED, DENIAL_CAUSES } from './guard-decision';
export type { DenialCause, GuardDecision } from './guard-decision';
export { ACTION_CLASSES, DEFAULT_ACTION_CLASS, isActionClass, normalizeActionClass } from './action-class';
export type { ActionClass } from './action-class';
export { GuardStats } from './guard-stats';
export { RuntimeEvents } from './events/runtime-events';
export type { RuntimeEvent, RuntimeObserver } from './events/runtime-events';
export type { GuardStatsSnapshot } from './guard-stats';
export { ADMIN_SKILL_PREFIX, auditPolicy, isAdminSkill, policyNeedsAttention } from './audit-policy';
export type { AuditPolicyOptions, PolicyHealth, ToolCatalog } from './audit-policy';
export { InvalidPolicyException } from './exceptions/invalid-policy.exception';
export { MissingDataSourceException } from './exceptions/missing-data-source.exception';
export { AgentAuditLog } from './audit/agent-audit-log';
export type { AuditBatchOptions, AuditLogMetrics } from './audit/agent-audit-log';
export { AUDIT_QUERY_DEFAULT_LIMIT, AUDIT_QUERY_MAX_LIMIT, isAuditRecordId } from './audit/audit-entry';
export type { AuditDeadLetter, AuditDeadLetterRecord, AuditEntry, AuditOutcome, AuditQuery, AuditRecord } from './audit/audit-entry';
export type { AuditLogStore, AuditTransaction } from './audit/audit-log.store';
export { AUDIT_CHAIN_GENESIS, auditDigest, auditEntryHash, auditTimestamp, canonicalJson } from './audit/audit-chain';
export type { AuditChainVerdict } from './audit/audit-chain';
export { verifyAuditChain } from './audit/verify-audit-chain';
export { InMemoryAuditLogStore } from './audit/in-memory-audit-log.store';
export { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
export type { TypeOrmAuditLogStoreOptions } from './audit/typeorm-audit-log.store';
export { AuditLogEntity } from './audit/audit-log.entity';
export { AuditDeadLetterEntity } from './audit/audit-dead-letter.entity';
export { Redactor, MAX_REDACTION_DEPTH, passesLuhn, STREAM_PATTERN_HOLD_BACK } from './redaction/redactor';
export { RedactionOptions } from './redaction/redaction-options';
export type { RedactionMetrics } from './redaction/redaction-options';
export { InvalidRedactionOptionsException } from './exceptions/invalid-redaction-options.exception';
export { TokenQuota } from './quota/token-quota';
export type { QuotaBudget, QuotaPeriod, QuotaStatus, TokenQuotaMetrics, TokenQuotaOptions, UserShare } from './quota/token-quota';
export type {
  QuotaAdmission,
  QuotaAdmitLimits,
  QuotaKey,
  QuotaUsageFilter,
  QuotaUsageRow,
  TokenQuotaStore,
} from './quota/token-quota.store';
export { MAX_CHARGE_TOKENS, QUOTA_USAGE_DEFAULT_LIMIT, QUOTA_USAGE_MAX_LIMIT } from './quota/token-quota.store';
export { InMemoryTokenQuotaStore } from './quota/in-memory-token-quota.store';
export { TypeOrmTokenQuotaStore } from './quota/typeorm-token-quota.store';
export { TokenUsageEntity } from './quota/token-usage.entity';
export { TokenUserUsageEntity } from './quota/token-user-usage.entity';
export { AUDIT_LOG_STORE, TOKEN_QUOTA_STORE, InjectAuditLogStore, InjectTokenQuotaStore } from './guard.constants';
export { GuardModuleOptions } from './guard-module.options';
export type { StoreChoice } from './guard-module.options';
export { GUARD_MODULE_OPTIONS } from './guard.module-definition';
export { GuardModule } from './guard.module';
export { ZMODU_GUARD_ENTITIES, ZMODU_GUARD_MIGRATIONS } from './guard.entities';
export { ownOptions, ownValue } from './own-value';
export { isScopeId, MAX_SCOPE_ID_LENGTH, scopeIdProblem } from './scope-id';
export { isRowRefused, sqlState } from './row-refused';
export { loadOptionalPeer, tryLoadOptionalPeer } from './optional-peer';
export type { OptionalPeerOptions } from './optional-peer';
export { OptionalPeerUnavailableException } from './exceptions/optional-peer-unavailable.exception';
