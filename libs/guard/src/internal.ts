// @zmodu/guard/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/guard and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { DENIED, DENIAL_CAUSES } from './guard-decision';
export { isActionClass, normalizeActionClass } from './action-class';
export { GuardStats } from './guard-stats';
export type { GuardStatsSnapshot } from './guard-stats';
export type { ToolCatalog } from './audit-policy';
export { InvalidPolicyException } from './exceptions/invalid-policy.exception';
export { InvalidGuardOptionsException } from './exceptions/invalid-guard-options.exception';
export { AUDIT_QUERY_MAX_LIMIT, isAuditRecordId } from './audit/audit-entry';
export { auditDigest } from './audit/audit-chain';
export { InMemoryAuditLogStore } from './audit/in-memory-audit-log.store';
export { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
export { STREAM_PATTERN_HOLD_BACK } from './redaction/redactor';
export { InvalidRedactionOptionsException } from './exceptions/invalid-redaction-options.exception';
export type { QuotaKey } from './quota/token-quota.store';
export { QUOTA_USAGE_MAX_LIMIT } from './quota/token-quota.store';
export { InMemoryTokenQuotaStore } from './quota/in-memory-token-quota.store';
export { AUDIT_LOG_STORE, TOKEN_QUOTA_STORE } from './guard.constants';
export { policyNeedsAttention } from './audit-policy';
export { PROPOSAL_OUTCOMES } from './events/proposal-outcomes';
export type { ProposalOutcome, ProposalOutcomes } from './events/proposal-outcomes';
