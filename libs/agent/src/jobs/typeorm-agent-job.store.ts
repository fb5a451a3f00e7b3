import { queryRows } from '@zmodu/core';
import { isScopeId } from '@zmodu/core';
import { DataSource } from 'typeorm';
import { AgentJobRecord, AgentJobStore, MissedTickPolicy, AgentJobOrigin, NewAgentJob, cronTickJobId } from './agent-job.ports';

const COLUMNS =
  'id, tenant_id, user_id, permissions, agent, goal, cron, time_zone, missed, origin, task, expires_at, created_at, cancelled_at, last_tick_at';
/** A job that still fires: not cancelled, not expired (`j` is the jobs table). */
const LIVE = 'j.cancelled_at IS NULL AND (j.expires_at IS NULL OR j.expires_at > clock_timestamp())';

/** A timestamp as a Date, to the millisecond (a driver's Date may come from another realm: String() of it drops the ms). */
const toDate = (v: unknown): Date | null =>
  v == null ? null : typeof (v as Date).getTime === 'function' ? new Date((v as Date).getTime()) : new Date(String(v));

function toJob(r: Record<string, unknown>): AgentJobRecord {
  const permissions = typeof r.permissions === 'string' ? (JSON.parse(r.permissions) as string[]) : (r.permissions as string[]);
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    userId: String(r.user_id),
    permissions,
    agent: r.agent == null ? null : String(r.agent),
    goal: String(r.goal),
    cron: String(r.cron),
    timeZone: String(r.time_zone),
    missed: r.missed as MissedTickPolicy,
    origin: r.origin as AgentJobOrigin,
    task: r.task == null ? null : String(r.task),
    expiresAt: toDate(r.expires_at),
    createdAt: toDate(r.created_at)!,
    cancelledAt: toDate(r.cancelled_at),
    lastTickAt: toDate(r.last_tick_at),
  };
}

/** The values of a job's row, in INSERT_COLUMNS order. */
const values = (j: NewAgentJob) => [
  j.id,
  j.tenantId,
  j.userId,
  JSON.stringify(j.permissions),
  j.agent,
  j.goal,
  j.cron,
  j.timeZone,
  j.missed,
  j.origin,
  j.task ?? null,
  j.expiresAt ? j.expiresAt.toISOString() : null,
];
const INSERT_COLUMNS = 'id, tenant_id, user_id, permissions, agent, goal, cron, time_zone, missed, origin, task, expires_at';
const INSERT_VALUES = '$1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10, $11, $12::timestamptz';

/**
 * Scheduled jobs on PostgreSQL (or PGlite) through TypeORM: the tables of ZMODU_AGENT_MIGRATIONS. A tick is claimed
 * by `INSERT ... ON CONFLICT DO NOTHING` on (job_id, tick), so two instances firing one tick run it once. A job is
 * created under its tenant's transaction-scoped advisory lock, counted and inserted in one statement, so the cap holds
 * whoever creates at the same time.
 */
export class TypeOrmAgentJobStore implements AgentJobStore {
  constructor(private readonly dataSource: DataSource) {}

  private rows(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    return queryRows(this.dataSource, sql, params);
  }

  async upsert(j: NewAgentJob): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO zmodu_agent_jobs (${INSERT_COLUMNS}) VALUES (${INSERT_VALUES})
       ON CONFLICT (id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, user_id = EXCLUDED.user_id,
         permissions = EXCLUDED.permissions, agent = EXCLUDED.agent, goal = EXCLUDED.goal, cron = EXCLUDED.cron,
         time_zone = EXCLUDED.time_zone, missed = EXCLUDED.missed, origin = EXCLUDED.origin, task = EXCLUDED.task,
         expires_at = EXCLUDED.expires_at,
         cancelled_at = CASE WHEN EXCLUDED.origin = 'static' THEN NULL ELSE zmodu_agent_jobs.cancelled_at END`,
      values(j),
    );
  }

  async create(j: NewAgentJob, maxActive: number): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      // One creator of the tenant at a time until commit; the INSERT's own statement then sees every job committed before.
      await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`zmodu_agent_jobs:${j.tenantId}`]);
      const rows = await queryRows(
        m,
        `INSERT INTO zmodu_agent_jobs (${INSERT_COLUMNS})
         SELECT ${INSERT_VALUES} WHERE (SELECT count(*) FROM zmodu_agent_jobs j WHERE j.tenant_id = $2 AND ${LIVE}) < $13
         RETURNING id`,
        [...values(j), maxActive],
      );
      return rows.length === 1;
    });
  }

  async retireStatic(keepIds: readonly string[]): Promise<string[]> {
    const rows = await this.rows(
      `UPDATE zmodu_agent_jobs SET cancelled_at = clock_timestamp()
       WHERE origin = 'static' AND cancelled_at IS NULL AND NOT (id = ANY($1::text[])) RETURNING id`,
      [[...keepIds]],
    );
    return rows.map((r) => String(r.id));
  }

  async get(tenantId: string, jobId: string): Promise<AgentJobRecord | null> {
    if (!isScopeId(tenantId) || !jobId) return null;
    const rows = await this.rows(`SELECT ${COLUMNS} FROM zmodu_agent_jobs WHERE tenant_id = $1 AND id = $2`, [tenantId, jobId]);
    return rows.length ? toJob(rows[0]) : null;
  }

  async list(tenantId: string): Promise<AgentJobRecord[]> {
    if (!isScopeId(tenantId)) return [];
    const rows = await this.rows(
      `SELECT ${COLUMNS} FROM zmodu_agent_jobs WHERE tenant_id = $1 AND cancelled_at IS NULL ORDER BY created_at, id`,
      [tenantId],
    );
    return rows.map(toJob);
  }

  async active(): Promise<AgentJobRecord[]> {
    const rows = await this.rows(`SELECT ${COLUMNS} FROM zmodu_agent_jobs j WHERE ${LIVE} ORDER BY created_at, id`, []);
    return rows.map(toJob);
  }

  async count(tenantId: string): Promise<number> {
    if (!isScopeId(tenantId)) return 0;
    const rows = await this.rows(`SELECT count(*)::int AS n FROM zmodu_agent_jobs j WHERE j.tenant_id = $1 AND ${LIVE}`, [tenantId]);
    return Number(rows[0]?.n ?? 0);
  }

  async cancel(tenantId: string, jobId: string): Promise<boolean> {
    if (!isScopeId(tenantId) || !jobId) return false;
    const rows = await this.rows(
      `UPDATE zmodu_agent_jobs SET cancelled_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2 AND cancelled_at IS NULL RETURNING id`,
      [tenantId, jobId],
    );
    return rows.length === 1;
  }

  async claimTick(jobId: string, tick: Date): Promise<boolean> {
    const rows = await this.rows(
      // Only a job still active: one cancelled on another instance (whose timer here has not heard yet), or expired, fires
      // no more (nor a tick at or past its expiry).
      `INSERT INTO zmodu_agent_job_ticks (job_id, tick)
         SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM zmodu_agent_jobs j WHERE j.id = $1 AND ${LIVE} AND (j.expires_at IS NULL OR j.expires_at > $2))
       ON CONFLICT (job_id, tick) DO NOTHING RETURNING job_id`,
      [jobId, tick.toISOString()],
    );
    if (rows.length !== 1) return false;
    await this.dataSource.query(
      `UPDATE zmodu_agent_jobs SET last_tick_at = $2 WHERE id = $1 AND (last_tick_at IS NULL OR last_tick_at < $2)`,
      [jobId, tick.toISOString()],
    );
    return true;
  }

  async claimCronTick(name: string, tick: Date): Promise<boolean> {
    const rows = await this.rows(
      `INSERT INTO zmodu_agent_job_ticks (job_id, tick) VALUES ($1, $2) ON CONFLICT (job_id, tick) DO NOTHING RETURNING job_id`,
      [cronTickJobId(name), tick.toISOString()],
    );
    return rows.length === 1;
  }

  async reclaimUnposted(olderThanMs: number, limit: number): Promise<{ job: AgentJobRecord; tick: Date }[]> {
    if (limit <= 0) return [];
    // A run stored for the tick (its post landed, only setTickRun was lost) means it was posted: not claimed again.
    const claimed = await this.rows(
      `UPDATE zmodu_agent_job_ticks t SET claimed_at = clock_timestamp()
       FROM (
         SELECT k.job_id, k.tick FROM zmodu_agent_job_ticks k
         JOIN zmodu_agent_jobs j ON j.id = k.job_id AND ${LIVE}
         WHERE k.run_id IS NULL
           AND k.claimed_at < clock_timestamp() - make_interval(secs => $1::double precision / 1000)
           AND k.tick > clock_timestamp() - interval '1 day'
           AND NOT EXISTS (
             SELECT 1 FROM zmodu_agent_runs r
             WHERE r.job_id = k.job_id AND r.job_tick = to_char(k.tick AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
         ORDER BY k.tick LIMIT $2
         FOR UPDATE OF k SKIP LOCKED
       ) s
       WHERE t.job_id = s.job_id AND t.tick = s.tick
       RETURNING t.job_id, t.tick`,
      [olderThanMs, limit],
    );
    if (!claimed.length) return [];
    const jobs = new Map(
      (await this.rows(`SELECT ${COLUMNS} FROM zmodu_agent_jobs WHERE id = ANY($1::text[])`, [claimed.map((r) => String(r.job_id))])).map(
        (r) => [String(r.id), toJob(r)],
      ),
    );
    return claimed.flatMap((r) => {
      const job = jobs.get(String(r.job_id));
      return job ? [{ job, tick: toDate(r.tick) as Date }] : [];
    });
  }

  async setTickRun(jobId: string, tick: Date, runId: string): Promise<void> {
    await this.dataSource.query(`UPDATE zmodu_agent_job_ticks SET run_id = $3 WHERE job_id = $1 AND tick = $2`, [
      jobId,
      tick.toISOString(),
      runId,
    ]);
  }
}
