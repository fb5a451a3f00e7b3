import { AuditChainVerdict } from './audit-chain';
import { AuditDeadLetter, AuditDeadLetterRecord, AuditEntry, AuditQuery, AuditRecord } from './audit-entry';

/**
 * Port: where audit entries are kept. `append` writes a batch atomically (all or nothing).
 * `setAside` and `deadLetters` are optional: a store that has them keeps the entries it refused
 * (poisoned rows) apart; without them, AgentAuditLog logs such an entry in full and counts it.
 */
export interface AuditLogStore {
  append(entries: readonly AuditEntry[]): Promise<void>;
  query(filter: AuditQuery): Promise<AuditRecord[]>;
  /** Keep entries that `append` refused on their own. Must accept any entry (store it as escaped JSON text). */
  setAside?(letters: readonly AuditDeadLetter[]): Promise<void>;
  /** The entries set aside, oldest first (default limit 100, at most 1000). */
  deadLetters?(limit?: number): Promise<AuditDeadLetterRecord[]>;
  /** Walk the hash chain of one tenant (null: the entries without a tenant) and report the first entry not as written. */
  verify?(tenantId: string | null): Promise<AuditChainVerdict>;
}
