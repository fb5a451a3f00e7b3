// The public API of @zmodu/guard: the guard and its policies and decisions, auditPolicy, the audit
// log and the token quota (ports, stores, migrations) and GuardModule.
export { Guard } from './guard';
export type { GuardOptions } from './guard';
export type { GuardPolicy } from './guard-policy';
export type { DenialCause } from './guard-decision';
export type { ActionClass } from './action-class';
export { RuntimeEvents } from './events/runtime-events';
export type { RuntimeEvent, RuntimeObserver } from './events/runtime-events';
export { auditPolicy } from './audit-policy';
export type { AuditPolicyOptions, PolicyHealth } from './audit-policy';
export { AgentAuditLog } from './audit/agent-audit-log';
export type { AuditEntry, AuditOutcome, AuditQuery, AuditRecord } from './audit/audit-entry';
export type { AuditLogStore } from './audit/audit-log.store';
export type { AuditChainVerdict } from './audit/audit-chain';
export { verifyAuditChain } from './audit/verify-audit-chain';
export { Redactor } from './redaction/redactor';
export { RedactionOptions } from './redaction/redaction-options';
export { TokenQuota } from './quota/token-quota';
export type { QuotaBudget, QuotaPeriod, QuotaStatus, TokenQuotaOptions } from './quota/token-quota';
export type { TokenQuotaStore } from './quota/token-quota.store';
export { InjectAuditLogStore, InjectTokenQuotaStore } from './guard.constants';
export { GuardModuleOptions } from './guard-module.options';
export { GuardModule } from './guard.module';
export { ZMODU_GUARD_MIGRATIONS } from './guard.migrations';
// From @zmodu/core, for applications: the one rule of every id of a tenant, a user or an agent; the loader of an optional
// peer dependency, with the error that names what to install; the store option of every module, with its one error when
// the application has no DataSource; the migrations of every @zmodu package loaded.
export {
  DataSourceMissingException,
  loadOptionalPeer,
  OptionalPeerUnavailableException,
  scopeIdProblem,
  zmoduMigrations,
  ZmoduError,
} from '@zmodu/core';
export type { StoreChoice } from '@zmodu/core';
