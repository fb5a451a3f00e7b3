import { AuditEntry, AuditQuery, AuditRecord } from './audit-entry';

/** Port: where audit entries are kept. `append` writes a batch atomically (all or nothing). */
export interface AuditLogStore {
  append(entries: readonly AuditEntry[]): Promise<void>;
  query(filter: AuditQuery): Promise<AuditRecord[]>;
}
