import { DataSource } from 'typeorm';
import { ActionClass } from '../action-class';
import {
  AuditDeadLetter,
  AuditDeadLetterRecord,
  AuditEntry,
  AuditOutcome,
  AuditQuery,
  AuditRecord,
  clampAuditLimit,
  cleanText,
} from './audit-entry';
import { AuditLogEntity } from './audit-log.entity';
import { AuditLogStore } from './audit-log.store';

/**
 * The default audit store: table `zmodu_audit_log` (see the guard migrations). One INSERT per batch.
 * Entries it refused on their own are kept in `zmodu_audit_dead_letters` as escaped JSON text.
 */
export class TypeOrmAuditLogStore implements AuditLogStore {
  constructor(private readonly dataSource: DataSource) {}

  async append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(AuditLogEntity)
      .values(
        entries.map((e) => ({
          runId: e.runId,
          agent: e.agent,
          tenantId: e.tenantId,
          userId: e.userId,
          skill: e.skill,
          action: e.action,
          decision: e.decision,
          cause: e.cause,
          outcome: e.outcome,
          durationMs: Math.round(e.durationMs),
          tokens: Math.round(e.tokens),
          at: e.at,
          proposalId: e.proposalId ?? null,
          approvers: e.approvers ? [...e.approvers] : null,
        })),
      )
      .execute();
  }

  async query(filter: AuditQuery): Promise<AuditRecord[]> {
    const qb = this.dataSource.getRepository(AuditLogEntity).createQueryBuilder('a');
    if (filter.runId !== undefined) qb.andWhere('a.run_id = :runId', { runId: filter.runId });
    if (filter.agent !== undefined) qb.andWhere('a.agent = :agent', { agent: filter.agent });
    if (filter.tenantId !== undefined) qb.andWhere('a.tenant_id = :tenantId', { tenantId: filter.tenantId });
    if (filter.userId !== undefined) qb.andWhere('a.user_id = :userId', { userId: filter.userId });
    if (filter.skill !== undefined) qb.andWhere('a.skill = :skill', { skill: filter.skill });
    if (filter.proposalId !== undefined) qb.andWhere('a.proposal_id = :proposalId', { proposalId: filter.proposalId });
    if (filter.decision !== undefined) qb.andWhere('a.decision = :decision', { decision: filter.decision });
    if (filter.since !== undefined) qb.andWhere('a.at >= :since', { since: filter.since });
    if (filter.until !== undefined) qb.andWhere('a.at <= :until', { until: filter.until });
    qb.orderBy('a.id', 'ASC').limit(clampAuditLimit(filter.limit));
    const rows = await qb.getMany();
    return rows.map((r) => ({
      id: String(r.id),
      runId: r.runId,
      agent: r.agent,
      tenantId: r.tenantId,
      userId: r.userId,
      skill: r.skill,
      action: r.action as ActionClass,
      decision: r.decision as 'allowed' | 'denied',
      cause: r.cause,
      outcome: r.outcome as AuditOutcome,
      durationMs: r.durationMs,
      tokens: r.tokens,
      at: r.at,
      proposalId: r.proposalId,
      approvers: r.approvers,
    }));
  }

  async setAside(letters: readonly AuditDeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    const params: unknown[] = [];
    const rows = letters.map((l, i) => {
      // JSON.stringify escapes NUL and lone surrogates, so the text is always writable.
      params.push(JSON.stringify(l.entry), cleanText(l.error), l.at);
      return `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})`;
    });
    await this.dataSource.query(`INSERT INTO zmodu_audit_dead_letters (entry, error, at) VALUES ${rows.join(', ')}`, params);
  }

  async deadLetters(limit?: number): Promise<AuditDeadLetterRecord[]> {
    const rows: Array<{ id: string; entry: string; error: string; at: Date | string }> = await this.dataSource.query(
      'SELECT id, entry, error, at FROM zmodu_audit_dead_letters ORDER BY id ASC LIMIT $1',
      [clampAuditLimit(limit)],
    );
    return rows.map((r) => {
      const raw = JSON.parse(r.entry) as AuditEntry & { at: string };
      return { id: String(r.id), entry: { ...raw, at: new Date(raw.at) }, error: r.error, at: new Date(r.at) };
    });
  }
}
