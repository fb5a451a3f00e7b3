import { entityManagerOf } from '@zmodu/skills';
import { SkillTransaction, transactionOf } from '@zmodu/skills/internal';
import { DataSource, EntityManager } from 'typeorm';
import { DecisionWrite, NewProposal, ProposalPageQuery, ProposalStore, RunProposalKey, StoredDecision } from './proposal.store';
import { ApprovalStep, DecisionRecord, ProposalEdit, ProposalRecord, ProposalStatus, ProposalVerdict } from './proposal.types';

const COLUMNS =
  'p.id, p.tenant_id, p.action, p.payload, p.amount, p.proposer, p.permissions, p.agent, p.status, p.verdict, p.reason, p.steps, p.approvals, p.version, p.run_id, p.created_at, p.expires_at, p.executed_at, p.result';
const DECISIONS = `coalesce((SELECT json_agg(json_build_object('step', d.step, 'decided_by', d.decided_by, 'decision', d.decision, 'reason', d.reason,
  'at', d.at, 'version', d.version, 'edit', d.edit) ORDER BY d.version, d.id) FROM zmodu_approval_decisions d WHERE d.proposal_id = p.id), '[]')`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Row = Record<string, unknown>;

/**
 * Proposals in PostgreSQL (tables zmodu_proposals and zmodu_approval_decisions, see
 * ZMODU_PIPELINE_MIGRATIONS). The statements of the hot path run as named prepared statements on
 * their connection: planning costs them more than running them.
 */
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class TypeOrmProposalStore implements ProposalStore {
  constructor(private readonly dataSource: DataSource) {}

  transaction<T>(work: (tx: SkillTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((m) => work(transactionOf(m)));
  }

  async insert(p: NewProposal, tx?: SkillTransaction): Promise<void> {
    const executed = p.status === 'executed';
    await this.prepared(
      tx,
      'insert',
      `INSERT INTO zmodu_proposals (id, tenant_id, action, payload, amount, proposer, permissions, agent, status, verdict, reason, steps, run_id, created_at, expires_at,
         executed_at, result, version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now(), $14, CASE WHEN $15::boolean THEN now() END, $16, 1)`,
      [
        p.id,
        p.tenantId,
        p.action,
        JSON.stringify(p.payload ?? null),
        p.amount,
        p.proposer,
        JSON.stringify(p.permissions),
        p.agent,
        p.status,
        p.verdict,
        p.reason,
        JSON.stringify(p.steps),
        p.runId,
        p.expiresAt,
        executed,
        executed ? JSON.stringify(p.result ?? null) : null,
      ],
    );
  }

  async findByRun(tx: SkillTransaction, key: RunProposalKey): Promise<ProposalRecord | null> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `zmodu:proposal-run:${JSON.stringify([key.tenantId, key.runId, key.action])}`,
    ]);
    const rows = await tx.query<Row>(
      `SELECT ${COLUMNS}, ${DECISIONS} AS decisions FROM zmodu_proposals p
       WHERE p.tenant_id = $1 AND p.run_id = $2 AND p.action = $3 AND p.proposer = $5 AND p.agent IS NOT DISTINCT FROM $6
         -- the payload the run proposed: an approver's edit replaced p.payload, its first edit keeps it as 'before'
         AND coalesce((SELECT x.edit -> 'before' -> 'payload' FROM zmodu_approval_decisions x
                       WHERE x.proposal_id = p.id AND x.edit IS NOT NULL ORDER BY x.version, x.id LIMIT 1), p.payload) = $4::jsonb
       ORDER BY p.created_at, p.id LIMIT 1`,
      [key.tenantId, key.runId, key.action, JSON.stringify(key.payload ?? null), key.proposer, key.agent],
    );
    return rows.length ? toRecord(rows[0]) : null;
  }

  async lockVelocity(tx: SkillTransaction, key: string): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`zmodu:velocity:${key}`]);
  }

  async countRecent(tx: SkillTransaction, tenantId: string, proposer: string | null, since: Date): Promise<number> {
    const [{ n }] = await tx.query<{ n: string }>(
      `SELECT count(*) AS n FROM zmodu_proposals WHERE tenant_id = $1 AND ($2::text IS NULL OR proposer = $2) AND created_at > $3`,
      [tenantId, proposer, since],
    );
    return Number(n);
  }

  async get(tenantId: string, id: string): Promise<ProposalRecord | null> {
    if (!UUID.test(id)) return null;
    const rows = await this.dataSource.query(
      `SELECT ${COLUMNS}, ${DECISIONS} AS decisions FROM zmodu_proposals p WHERE p.id = $1 AND p.tenant_id = $2`,
      [id, tenantId],
    );
    return rows.length ? toRecord(rows[0]) : null;
  }

  async list(tenantId: string, query: ProposalPageQuery): Promise<{ items: ProposalRecord[]; total: number }> {
    const where = `p.tenant_id = $1 AND ($2::text IS NULL OR p.status = $2)`;
    const params = [tenantId, query.status ?? null];
    const [{ n }] = await this.dataSource.query(`SELECT count(*) AS n FROM zmodu_proposals p WHERE ${where}`, params);
    const rows = await this.dataSource.query(
      `SELECT ${COLUMNS}, ${DECISIONS} AS decisions FROM zmodu_proposals p WHERE ${where} ORDER BY p.created_at DESC, p.id LIMIT $3 OFFSET $4`,
      [...params, query.limit, (query.page - 1) * query.limit],
    );
    return { items: rows.map(toRecord), total: Number(n) };
  }

  async expire(tenantId: string, now: readonly string[] = []): Promise<number> {
    const ids = now.filter((id) => UUID_TEXT.test(id));
    const rows = await transactionOf(this.dataSource.manager).query(
      `UPDATE zmodu_proposals SET status = 'expired', version = version + 1
         WHERE tenant_id = $1 AND status = 'pending' AND (expires_at <= now() OR id = ANY ($2::uuid[])) RETURNING id`,
      [tenantId, ids],
    );
    return rows.length;
  }

  async decide(d: StoredDecision): Promise<DecisionWrite> {
    const edit = d.edit ? { before: d.edit.before, after: d.edit.after } : null;
    let rows: Row[];
    try {
      rows = await this.prepared(
        undefined,
        'decide',
        `WITH claimed AS (
           UPDATE zmodu_proposals p SET
             approvals = CASE WHEN $12::jsonb IS NOT NULL THEN 0 WHEN $4 = 'approve' THEN p.approvals + 1 ELSE p.approvals END,
             status = CASE WHEN $4 = 'reject' THEN 'rejected'
                           WHEN $12::jsonb IS NOT NULL THEN 'pending'
                           WHEN p.approvals + 1 >= greatest(1, jsonb_array_length(p.steps) + jsonb_array_length(coalesce($13::jsonb, '[]'))) THEN 'approved'
                           ELSE 'pending' END,
             reason = CASE WHEN $4 = 'reject' THEN $6 ELSE p.reason END,
             steps = coalesce($11::jsonb, p.steps || coalesce($13::jsonb, '[]')),
             payload = CASE WHEN $12::jsonb IS NULL THEN p.payload ELSE ($12::jsonb -> 'after' -> 'payload') END,
             amount = CASE WHEN $12::jsonb IS NULL THEN p.amount ELSE ($12::jsonb -> 'after' ->> 'amount')::numeric END,
             version = p.version + 1
           WHERE p.id = $1 AND p.tenant_id = $2 AND p.status = 'pending' AND p.version = $9 AND p.approvals = $10
             AND (p.expires_at IS NULL OR p.expires_at > now())
             AND p.proposer <> $3
             AND coalesce(p.steps -> p.approvals ->> 'permission', $7) = ANY ($8::text[])
             AND NOT EXISTS (SELECT 1 FROM zmodu_approval_decisions x WHERE x.proposal_id = p.id AND x.decided_by = $3)
           RETURNING p.id, p.status, p.version
         )
         INSERT INTO zmodu_approval_decisions (proposal_id, step, decided_by, decision, reason, at, version, edit)
         SELECT id, $10, $3, $4, $5, now(), $9, $12 FROM claimed
         RETURNING (SELECT status FROM claimed) AS status, (SELECT version FROM claimed) AS version`,
        [
          d.id,
          d.tenantId,
          d.decidedBy,
          d.decision,
          d.reason,
          `rejected by ${d.decidedBy}: ${d.reason}`,
          d.defaultPermission,
          [...d.permissions],
          d.version,
          d.step,
          d.edit ? JSON.stringify(d.edit.steps) : null,
          edit ? JSON.stringify(edit) : null,
          !d.edit && d.addSteps?.length ? JSON.stringify(d.addSteps) : null,
        ],
      );
    } catch (err) {
      // One person racing themselves across two steps: the (proposal, person) key refuses the second.
      if (sqlState(err) === '23505') return { applied: false, alreadyDecided: true };
      throw err;
    }
    if (rows.length !== 1) return { applied: false, alreadyDecided: false };
    return { applied: true, status: rows[0].status as 'pending' | 'approved' | 'rejected', version: Number(rows[0].version) };
  }

  async claimApproved(tx: SkillTransaction, id: string): Promise<ProposalRecord | null> {
    const rows = await this.prepared(
      tx,
      'claim',
      `SELECT ${COLUMNS}, ${DECISIONS} AS decisions FROM zmodu_proposals p WHERE p.id = $1 AND p.status = 'approved' FOR UPDATE OF p SKIP LOCKED`,
      [id],
    );
    return rows.length ? toRecord(rows[0]) : null;
  }

  async markExecuted(tx: SkillTransaction, id: string, result: unknown): Promise<void> {
    await this.prepared(
      tx,
      'executed',
      `UPDATE zmodu_proposals SET status = 'executed', verdict = 'executed', executed_at = now(), result = $2, version = version + 1 WHERE id = $1`,
      [id, JSON.stringify(result ?? null)],
    );
  }

  async markFailed(id: string, reason: string): Promise<boolean> {
    const rows = await transactionOf(this.dataSource.manager).query(
      `UPDATE zmodu_proposals SET status = 'failed', verdict = 'executor_failed', reason = $2, version = version + 1 WHERE id = $1 AND status = 'approved' RETURNING id`,
      [id, reason.slice(0, 1000)],
    );
    return rows.length === 1;
  }

  async approvedIds(limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM zmodu_proposals WHERE status = 'approved' ORDER BY created_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => String(r.id));
  }

  /** A statement as a named prepared statement on the connection (in `tx` when given). */
  private async prepared(tx: SkillTransaction | undefined, name: string, text: string, values: unknown[]): Promise<Row[]> {
    const m: EntityManager | undefined = tx ? entityManagerOf(tx) : undefined;
    const runner = m?.queryRunner ?? this.dataSource.createQueryRunner();
    const own = !m?.queryRunner;
    try {
      const conn = (await runner.connect()) as { query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }> };
      return (await conn.query({ name: `zmodu_pipeline_${name}_v3`, text, values })).rows;
    } finally {
      if (own) await runner.release();
    }
  }
}

/** SQLSTATE of a database error, raw or wrapped by TypeORM. */
function sqlState(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

function decisionsFrom(value: unknown): DecisionRecord[] {
  const rows = (json(value) as Row[]) ?? [];
  return rows.map((r) => ({
    step: Number(r.step),
    decidedBy: String(r.decided_by),
    decision: r.decision as 'approve' | 'reject',
    reason: String(r.reason),
    at: new Date(r.at as string),
    version: Number(r.version ?? 0),
    edit: (json(r.edit) as ProposalEdit | null) ?? null,
  }));
}

export function toRecord(r: Row): ProposalRecord {
  const steps = (json(r.steps) as ApprovalStep[]) ?? [];
  const approvals = Number(r.approvals);
  const status = r.status as ProposalStatus;
  const waiting = status === 'pending' && approvals < Math.max(1, steps.length) ? (steps[approvals] ?? null) : null;
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    action: String(r.action),
    payload: json(r.payload),
    amount: r.amount === null || r.amount === undefined ? null : Number(r.amount),
    proposer: String(r.proposer),
    permissions: (json(r.permissions) as string[]) ?? [],
    agent: (r.agent as string | null) ?? null,
    status,
    verdict: r.verdict as ProposalVerdict,
    reason: (r.reason as string | null) ?? null,
    steps,
    approvals,
    version: Number(r.version),
    waitingStep: waiting ? { index: approvals, name: waiting.name, permission: waiting.permission } : null,
    createdAt: new Date(r.created_at as string),
    expiresAt: r.expires_at ? new Date(r.expires_at as string) : null,
    executedAt: r.executed_at ? new Date(r.executed_at as string) : null,
    result: json(r.result) ?? null,
    runId: (r.run_id as string | null) ?? null,
    decisions: decisionsFrom(r.decisions),
  };
}
