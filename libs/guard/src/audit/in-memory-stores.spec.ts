import { auditLogStoreContract, tokenQuotaStoreContract } from '../testing';
import { InMemoryAuditLogStore } from './in-memory-audit-log.store';
import { InMemoryTokenQuotaStore } from '../quota/in-memory-token-quota.store';

describe('InMemoryAuditLogStore (contract)', () => {
  auditLogStoreContract(async () => ({ store: new InMemoryAuditLogStore() }));
});

describe('InMemoryTokenQuotaStore (contract)', () => {
  tokenQuotaStoreContract(async () => ({ store: new InMemoryTokenQuotaStore() }));
});
