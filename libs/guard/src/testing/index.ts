export { auditLogStoreContract } from './audit-log-store.contract';
export type { StoreHarness } from './audit-log-store.contract';
export { tokenQuotaStoreContract } from './token-quota-store.contract';
export { sampleAuditEntry } from './sample-audit-entry';
export { simulateMissingPeers } from '@zmodu/core';
