import { AuditChainVerdict } from './audit-chain';
import { AuditDeadLetter, AuditDeadLetterRecord, AuditEntry, AuditQuery, AuditRecord } from './audit-entry';

/**
 * Port: where audit entries are kept. `append` writes a batch atomically (all or nothing).
 * `refusesEntry` says which of its failures mean an entry itself is invalid; `setAside` and `deadLetters` are optional:
 * a store that has them keeps the entries it refused (poisoned rows) apart; without them, AgentAuditLog logs such an
 * entry in full and counts it.
 */
export interface AuditLogStore {
  append(entries: readonly AuditEntry[]): Promise<void>;
  /**
   * Whether `err`, thrown by `append`, says that an entry of the batch is itself invalid (a value the store can never
   * hold), rather than that the write failed (a lock timeout, a trigger, a full disk, an outage). Only then does
   * AgentAuditLog look for that entry and set it aside; any other failure keeps the batch queued and retried, in order.
   * Without it, no entry is ever set aside. TypeOrmAuditLogStore answers with `isRowRefused` (the SQLSTATE class).
   */
  refusesEntry?(err: unknown): boolean;
  query(filter: AuditQuery): Promise<AuditRecord[]>;
  /** Keep entries that `append` refused on their own. Must accept any entry (store it as escaped JSON text). */
  setAside?(letters: readonly AuditDeadLetter[]): Promise<void>;
  /** The entries set aside, oldest first (default limit 100, at most 1000). */
  deadLetters?(limit?: number): Promise<AuditDeadLetterRecord[]>;
  /** Walk the hash chain of one tenant (null: the entries without a tenant) and report the first entry not as written. */
  verify?(tenantId: string | null): Promise<AuditChainVerdict>;
  /**
   * Keep `entry` in the caller's open transaction (written through its `query`): it commits with the caller's writes, or
   * not at all. `moveIntents` chains it once committed. Optional: without it, AgentAuditLog.recordWithin records as usual.
   */
  writeIntent?(transaction: AuditTransaction, entry: AuditEntry): Promise<void>;
  /** Append up to `limit` committed intents to the log and delete them, in one transaction (each exactly once, whoever else moves them at the same time). How many moved. */
  moveIntents?(limit: number): Promise<number>;
}

/** An open transaction of the caller's (a staged execution's): written through, never committed here. */
export interface AuditTransaction {
  query(sql: string, params?: readonly unknown[]): Promise<unknown>;
}
