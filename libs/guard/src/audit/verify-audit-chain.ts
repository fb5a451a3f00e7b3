import { DataSource } from 'typeorm';
import { AUDIT_STORE_CANNOT_VERIFY_MESSAGE } from '../guard.messages';
import { AuditChainVerdict } from './audit-chain';
import { AuditLogStore } from './audit-log.store';
import { TypeOrmAuditLogStore } from './typeorm-audit-log.store';

/**
 * Verify the audit hash chain of one tenant (null: the entries without a tenant), from a store or straight from the
 * database: `{ ok: true, entries, head }`, or the first bad entry by sequence number and what is wrong with it.
 */
export async function verifyAuditChain(source: AuditLogStore | DataSource, tenantId: string | null): Promise<AuditChainVerdict> {
  const store = source instanceof DataSource ? new TypeOrmAuditLogStore(source) : source;
  if (!store.verify) throw new TypeError(AUDIT_STORE_CANNOT_VERIFY_MESSAGE);
  return store.verify(tenantId);
}
