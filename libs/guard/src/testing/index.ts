export { auditLogStoreContract } from './audit-log-store.contract';
export type { StoreHarness } from './audit-log-store.contract';
export { tokenQuotaStoreContract } from './token-quota-store.contract';
export { sampleAuditEntry } from './sample-audit-entry';
export { setOptionalPeerResolver, simulateMissingPeers } from '@zmodu/core';
export type { OptionalPeerResolver } from '@zmodu/core';
