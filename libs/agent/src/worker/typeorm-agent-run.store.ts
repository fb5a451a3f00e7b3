import { isScopeId } from '@zmodu/guard';
import { DataSource } from 'typeorm';
import { StopReason } from '../agent-run';
import { LEASE_EXPIRED_MESSAGE, OUT_OF_ATTEMPTS_MESSAGE } from '../agent.messages';
import { AgentRunOutcome, AgentRunRecord, AgentRunStatus, AgentRunStore, MAX_RUN_ATTEMPTS, NewAgentRun } from './worker.ports';

/** Rows of a query; TypeORM's postgres driver answers UPDATE ... RETURNING as [rows, affected]. */
export async function queryRows(dataSource: DataSource, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  const result: unknown = await dataSource.query(sql, params);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0];
  return result as Record<string, unknown>[];
}

const COLUMNS =
  'id, tenant_id, user_id, permissions, agent, goal, job_id, job_tick, status, attempts, max_attempts, answer, stopped_reason, steps, pending_approvals, error, lease_owner, lease_until, created_at, started_at, finished_at';
/** Seconds from a millisecond parameter, for `now() + ...`. */
const MS = (p: string) => `make_interval(secs => ${p}::double precision / 1000)`;
/** Rows per INSERT statement (13 parameters a row, well under PostgreSQL's 65535). */
const INSERT_CHUNK = 500;

/**
 * The AgentWorker's run records on PostgreSQL (or PGlite) through TypeORM: the table of ZMODU_AGENT_MIGRATIONS.
 * Every change of a run's state is one conditional UPDATE (on its status and lease owner), so two instances
 * never both win a claim and a stale owner never writes an outcome.
 */
export class TypeOrmAgentRunStore implements AgentRunStore {
  constructor(private readonly dataSource: DataSource) {}

  private rows(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    return queryRows(this.dataSource, sql, params);
  }

  async insert(runs: readonly NewAgentRun[]): Promise<void> {
    if (!runs.length) return;
    await this.dataSource.transaction(async (manager) => {
      for (let i = 0; i < runs.length; i += INSERT_CHUNK) {
        const chunk = runs.slice(i, i + INSERT_CHUNK);
        const params: unknown[] = [];
        const values = chunk.map((r) => {
          const base = params.length;
          params.push(
            r.id,
            r.tenantId,
            r.userId,
            JSON.stringify(r.permissions),
            r.agent,
            r.goal,
            r.jobId ?? null,
            r.jobTick ?? null,
            r.maxAttempts,
          );
          return `(${Array.from({ length: 9 }, (_, k) => `$${base + k + 1}`).join(', ')}, clock_timestamp())`;
        });
        await manager.query(
          `INSERT INTO zmodu_agent_runs (id, tenant_id, user_id, permissions, agent, goal, job_id, job_tick, max_attempts, created_at) VALUES ${values.join(', ')}`,
          params,
        );
      }
    });
  }

  async get(tenantId: string, runId: string): Promise<AgentRunRecord | null> {
    if (!isScopeId(tenantId) || !isScopeId(runId)) return null;
    const rows = await this.rows(`SELECT ${COLUMNS} FROM zmodu_agent_runs WHERE id = $1 AND tenant_id = $2`, [runId, tenantId]);
    return rows.length ? toRecord(rows[0]) : null;
  }

  async claim(runId: string, owner: string, leaseMs: number): Promise<AgentRunRecord | null> {
    const rows = await this.rows(
      `UPDATE zmodu_agent_runs SET status = 'running', lease_owner = $2, lease_until = now() + ${MS('$3')}, attempts = attempts + 1,
         started_at = coalesce(started_at, now())
       WHERE id = $1 AND status IN ('queued', 'interrupted') AND attempts < max_attempts RETURNING ${COLUMNS}`,
      [runId, owner, leaseMs],
    );
    if (rows.length) return toRecord(rows[0]);
    const failed = await this.rows(
      `UPDATE zmodu_agent_runs SET status = 'failed', error = $2 || coalesce(' Last: ' || error, ''), finished_at = now()
       WHERE id = $1 AND status IN ('queued', 'interrupted') AND attempts >= max_attempts RETURNING ${COLUMNS}`,
      [runId, OUT_OF_ATTEMPTS_MESSAGE],
    );
    return failed.length ? toRecord(failed[0]) : null;
  }

  async heartbeat(owner: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    if (!runIds.length) return [];
    const rows = await this.rows(
      `UPDATE zmodu_agent_runs SET lease_until = now() + ${MS('$3')}
       WHERE id = ANY ($2::text[]) AND lease_owner = $1 AND status = 'running' RETURNING id`,
      [owner, [...runIds], leaseMs],
    );
    const held = new Set(rows.map((r) => String(r.id)));
    return runIds.filter((id) => !held.has(id));
  }

  async finish(runId: string, owner: string, o: AgentRunOutcome): Promise<boolean> {
    const rows = await this.rows(
      `UPDATE zmodu_agent_runs SET status = $3, answer = $4, stopped_reason = $5, steps = $6::jsonb, pending_approvals = $7::jsonb,
         error = $8, lease_owner = NULL, lease_until = NULL, finished_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status = 'running' RETURNING id`,
      [runId, owner, o.status, o.answer, o.stoppedReason, JSON.stringify(o.steps), JSON.stringify(o.pendingApprovals), o.error],
    );
    return rows.length === 1;
  }

  async release(runId: string, owner: string, reason: string): Promise<boolean> {
    const rows = await this.rows(
      `UPDATE zmodu_agent_runs SET status = 'interrupted', lease_owner = NULL, lease_until = NULL, error = $3,
         max_attempts = LEAST(max_attempts + 1, $4)
       WHERE id = $1 AND lease_owner = $2 AND status = 'running' RETURNING id`,
      [runId, owner, reason, MAX_RUN_ATTEMPTS],
    );
    return rows.length === 1;
  }

  async recoverable(limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    await this.rows(
      `UPDATE zmodu_agent_runs SET status = 'interrupted', lease_owner = NULL, lease_until = NULL, error = $1
       WHERE status = 'running' AND lease_until < now() RETURNING id`,
      [LEASE_EXPIRED_MESSAGE],
    );
    const rows = await this.rows(
      `SELECT id FROM zmodu_agent_runs WHERE status IN ('queued', 'interrupted') ORDER BY created_at, id LIMIT $1`,
      [limit],
    );
    return rows.map((r) => String(r.id));
  }

  async countQueued(): Promise<number> {
    const [{ n }] = await this.rows(`SELECT count(*) AS n FROM zmodu_agent_runs WHERE status IN ('queued', 'interrupted')`, []);
    return Number(n);
  }
}

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
const date = (v: unknown): Date | null => (v ? new Date(v as string) : null);

function toRecord(r: Record<string, unknown>): AgentRunRecord {
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    userId: String(r.user_id),
    permissions: json(r.permissions) as string[],
    agent: String(r.agent),
    goal: String(r.goal),
    ...(r.job_id ? { jobId: String(r.job_id), jobTick: String(r.job_tick) } : {}),
    status: r.status as AgentRunStatus,
    attempts: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    answer: (r.answer as string | null) ?? null,
    stoppedReason: (r.stopped_reason as StopReason | null) ?? null,
    steps: json(r.steps) as AgentRunRecord['steps'],
    pendingApprovals: json(r.pending_approvals) as AgentRunRecord['pendingApprovals'],
    error: (r.error as string | null) ?? null,
    leaseOwner: (r.lease_owner as string | null) ?? null,
    leaseUntil: date(r.lease_until),
    createdAt: date(r.created_at) as Date,
    startedAt: date(r.started_at),
    finishedAt: date(r.finished_at),
  };
}
