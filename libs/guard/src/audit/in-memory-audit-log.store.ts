import { AuditChainLink, AuditChainVerdict, AUDIT_CHAIN_GENESIS, auditTimestamp, chainEntries, verifyChainLinks } from './audit-chain';
import {
  AuditDeadLetter,
  AuditDeadLetterRecord,
  AuditEntry,
  AuditQuery,
  AuditRecord,
  checkAuditQuery,
  clampAuditLimit,
} from './audit-entry';
import { AuditLogStore } from './audit-log.store';

/** An audit store in process memory, for tests and apps without a database. Lost on restart. */
export class InMemoryAuditLogStore implements AuditLogStore {
  private readonly records: AuditRecord[] = [];
  private readonly letters: AuditDeadLetterRecord[] = [];
  private readonly links: AuditChainLink[] = [];
  private readonly heads = new Map<string | null, { seq: number; hash: string }>();
  private nextId = 1;

  async append(entries: readonly AuditEntry[]): Promise<void> {
    for (const entry of entries) {
      const [link] = chainEntries(this.heads.get(entry.tenantId) ?? { seq: 0, hash: AUDIT_CHAIN_GENESIS }, [entry]);
      const { args: _args, result: _result, ...fields } = entry;
      // Arguments and result kept as the database store keeps them: their audit text (a copy, capped), read back.
      const record: AuditRecord = {
        ...fields,
        proposalId: entry.proposalId ?? null,
        approvers: entry.approvers ? [...entry.approvers] : null,
        ...(link.args !== undefined ? { args: JSON.parse(link.args) as unknown } : {}),
        ...(link.result !== undefined ? { result: JSON.parse(link.result) as unknown } : {}),
        id: String(this.nextId++),
      };
      this.heads.set(entry.tenantId, link);
      this.records.push(record);
      this.links.push({ ...link, entry: record, at: auditTimestamp(record.at), payload: { args: link.args, result: link.result } });
    }
  }

  /** The hash chain of one tenant (null: entries without a tenant), as written (the records kept here cannot be changed from outside). */
  async verify(tenantId: string | null): Promise<AuditChainVerdict> {
    const chain = this.links.filter((l) => l.entry.tenantId === tenantId);
    const walk = async function* () {
      yield* chain;
    };
    return verifyChainLinks(walk(), async (hash) => chain.some((l) => l.hash === hash), null);
  }

  async query(filter: AuditQuery): Promise<AuditRecord[]> {
    checkAuditQuery(filter);
    const limit = clampAuditLimit(filter.limit);
    const out: AuditRecord[] = [];
    for (const r of this.records) {
      if (filter.runId !== undefined && r.runId !== filter.runId) continue;
      if (filter.agent !== undefined && r.agent !== filter.agent) continue;
      if (filter.tenantId !== undefined && r.tenantId !== filter.tenantId) continue;
      if (filter.userId !== undefined && r.userId !== filter.userId) continue;
      if (filter.skill !== undefined && r.skill !== filter.skill) continue;
      if (filter.proposalId !== undefined && r.proposalId !== filter.proposalId) continue;
      if (filter.decision !== undefined && r.decision !== filter.decision) continue;
      if (filter.outcome !== undefined && r.outcome !== filter.outcome) continue;
      if (filter.afterId !== undefined && BigInt(r.id) <= BigInt(filter.afterId)) continue;
      if (filter.since !== undefined && r.at < filter.since) continue;
      if (filter.until !== undefined && r.at > filter.until) continue;
      out.push({ ...r });
      if (out.length >= limit) break;
    }
    return out;
  }

  async setAside(letters: readonly AuditDeadLetter[]): Promise<void> {
    for (const l of letters) this.letters.push({ entry: { ...l.entry }, error: l.error, at: l.at, id: String(this.nextId++) });
  }

  async deadLetters(limit?: number): Promise<AuditDeadLetterRecord[]> {
    return this.letters.slice(0, clampAuditLimit(limit)).map((l) => ({ ...l, entry: { ...l.entry } }));
  }
}
