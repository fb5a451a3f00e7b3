import { DataSource } from 'typeorm';
import { ActionClass } from '../action-class';
import { AuditEntry, AuditOutcome, AuditQuery, AuditRecord, clampAuditLimit } from './audit-entry';
import { AuditLogEntity } from './audit-log.entity';
import { AuditLogStore } from './audit-log.store';

/** The default audit store: table `zmodu_audit_log` (see the guard migration). One INSERT per batch. */
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
}
