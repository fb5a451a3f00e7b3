import { isScopeId, returning } from '@zmodu/core';
import { DataSource, EntityManager } from 'typeorm';
import { StopReason } from '../agent-run';
import { LEASE_EXPIRED_MESSAGE, OUT_OF_ATTEMPTS_MESSAGE } from '../agent.messages';
import {
  AgentRunClock,
  AgentRunDecision,
  AgentRunLease,
  AgentRunWait,
  JournalPage,
  SettleOptions,
  AgentRunLimits,
  AgentRunMailbox,
  AgentRunOutcome,
  AgentRunRecord,
  AgentRunStatus,
  AgentRunStore,
  MAX_RUN_ATTEMPTS,
  NewAgentRun,
  RecoverableRuns,
  RefusedRun,
} from './worker.ports';
import { admitRuns } from './admit-runs';
import { RunJournalConflictException } from '../exceptions/run-journal-conflict.exception';
import { journalPage, RunJournalEntry } from '../journal/run-journal';
import { canonicalJson } from '@zmodu/core';

/** Rows of a query; TypeORM's postgres driver answers UPDATE ... RETURNING as [rows, affected]. */
export async function queryRows(dataSource: DataSource, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  const result: unknown = await dataSource.query(sql, params);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0];
  return result as Record<string, unknown>[];
}

const COLUMNS =
  'id, tenant_id, user_id, permissions, agent, goal, job_id, job_tick, status, attempts, max_attempts, answer, stopped_reason, steps, pending_approvals, error, lease_owner, lease_until, created_at, started_at, finished_at, waiting_for, wait_until, decisions';
/** Tries of a settle whose conditional write lost to another one (each reads the run again). */
const SETTLE_TRIES = 8;
/** Seconds from a millisecond parameter, for `now() + ...`. */
const MS = (p: string) => `make_interval(secs => ${p}::double precision / 1000)`;
/** The run a lease holds: `$1` run id, `$2` owner, `$3` attempt. */
const HELD = `SELECT tenant_id FROM zmodu_agent_runs WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running'`;
/** The same, renewing the lease to now + `leaseMs` (never shortening it). */
const RENEWED = (leaseMs: number) =>
  `UPDATE zmodu_agent_runs SET lease_until = greatest(lease_until, now() + ${MS(String(Math.max(0, Math.floor(leaseMs))))})
     WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running' RETURNING tenant_id`;
/** Rows per INSERT statement (13 parameters a row, well under PostgreSQL's 65535). */
const INSERT_CHUNK = 500;
/**
 * The contact of an instance on the store's clock (zmodu_agent_run_clock, one row), as a CTE named `contact` giving the
 * last outage: a gap of `outageMs` (parameter) since the last contact, or a restart of the server since then
 * (pg_postmaster_start_time, the database's own clock), is an outage from the last contact to now.
 */
const CONTACT = (outageMs: string) => `contact AS (
  INSERT INTO zmodu_agent_run_clock AS k (id, last_contact) VALUES (true, now())
  ON CONFLICT (id) DO UPDATE SET
    outage_from = CASE WHEN k.last_contact <= now() - ${MS(outageMs)} OR k.last_contact < pg_postmaster_start_time() THEN k.last_contact ELSE k.outage_from END,
    outage_to = CASE WHEN k.last_contact <= now() - ${MS(outageMs)} OR k.last_contact < pg_postmaster_start_time() THEN now() ELSE k.outage_to END,
    last_contact = greatest(k.last_contact, now())
  RETURNING outage_from, outage_to
)`;

/**
 * The AgentWorker's run records on PostgreSQL (or PGlite) through TypeORM: the table of ZMODU_AGENT_MIGRATIONS.
 * Every change of a run's state is one conditional UPDATE (on its status, lease owner and attempt), so two instances
 * never both win a claim and the holder of an older claim never writes an outcome.
 */
export class TypeOrmAgentRunStore implements AgentRunStore {
  constructor(private readonly dataSource: DataSource) {}

  private rows(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    return queryRows(this.dataSource, sql, params);
  }

  async insert(runs: readonly NewAgentRun[], limits: AgentRunLimits = {}): Promise<{ refused: RefusedRun[] }> {
    if (!runs.length) return { refused: [] };
    return this.dataSource.transaction(async (manager) => {
      // The bounds are decided in this transaction: it takes a transaction lock of the whole mailbox (with `total`), then
      // of each tenant (with `perTenant`, in the order of the keys: every insert takes its locks in one order, so no
      // deadlock between batches), and only then counts. Concurrent inserts, on any instance, wait for each other: the
      // count each sees includes the runs the one before committed. Never count-then-insert.
      const tenants = [...new Set(runs.map((r) => r.tenantId))];
      if (limits.total !== undefined) await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('zmodu_agent_runs.mailbox', 0))`);
      const waiting = new Map<string, number>();
      if (limits.perTenant !== undefined) {
        await manager.query(
          `SELECT count(pg_advisory_xact_lock(k)) FROM (
             SELECT DISTINCT hashtextextended('zmodu_agent_runs.tenant:' || t, 0) AS k FROM unnest($1::text[]) AS t ORDER BY k
           ) AS keys`,
          [tenants],
        );
        const counts = (await manager.query(
          `SELECT tenant_id, count(*)::int AS n FROM zmodu_agent_runs
           WHERE tenant_id = ANY ($1::text[]) AND status IN ('queued', 'interrupted') GROUP BY tenant_id`,
          [tenants],
        )) as { tenant_id: string; n: number }[];
        for (const c of counts) waiting.set(c.tenant_id, Number(c.n));
      }
      let total = 0;
      if (limits.total !== undefined) {
        const [{ n }] = (await manager.query(
          `SELECT count(*)::int AS n FROM zmodu_agent_runs WHERE status IN ('queued', 'interrupted')`,
        )) as { n: number }[];
        total = Number(n);
      }
      const { accepted, refused } = admitRuns(runs, limits, waiting, total);
      for (let i = 0; i < accepted.length; i += INSERT_CHUNK) {
        const chunk = accepted.slice(i, i + INSERT_CHUNK);
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
      return { refused };
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
         started_at = coalesce(started_at, now()), claimed_at = now()
       WHERE id = $1 AND status IN ('queued', 'interrupted') AND attempts < max_attempts RETURNING ${COLUMNS}`,
      [runId, owner, leaseMs],
    );
    if (rows.length) return toRecord(rows[0]);
    const failed = await this.rows(
      `UPDATE zmodu_agent_runs SET status = 'failed', error = $2 || coalesce(' Last: ' || error, ''), finished_at = now(), claimed_at = now()
       WHERE id = $1 AND status IN ('queued', 'interrupted') AND attempts >= max_attempts RETURNING ${COLUMNS}`,
      [runId, OUT_OF_ATTEMPTS_MESSAGE],
    );
    return failed.length ? toRecord(failed[0]) : null;
  }

  async heartbeat(leases: readonly AgentRunLease[], leaseMs: number, clock: AgentRunClock): Promise<string[]> {
    const rows = await this.rows(
      `WITH ${CONTACT('$4')}, renewed AS (
         UPDATE zmodu_agent_runs r SET lease_until = now() + ${MS('$5')}
         FROM unnest($1::text[], $2::text[], $3::int[]) AS l (id, owner, attempt)
         WHERE r.id = l.id AND r.lease_owner = l.owner AND r.attempts = l.attempt AND r.status = 'running' RETURNING r.id
       )
       SELECT id FROM renewed`,
      [leases.map((l) => l.runId), leases.map((l) => l.owner), leases.map((l) => l.attempt), clock.outageMs, leaseMs],
    );
    const held = new Set(rows.map((r) => String(r.id)));
    return leases.filter((l) => !held.has(l.runId)).map((l) => l.runId);
  }

  async finish(lease: AgentRunLease, o: AgentRunOutcome): Promise<boolean> {
    const rows = await this.rows(
      `UPDATE zmodu_agent_runs SET status = $4, answer = $5, stopped_reason = $6, steps = $7::jsonb, pending_approvals = $8::jsonb,
         error = $9, lease_owner = NULL, lease_until = NULL, finished_at = now()
       WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running' RETURNING id`,
      [
        lease.runId,
        lease.owner,
        lease.attempt,
        o.status,
        o.answer,
        o.stoppedReason,
        JSON.stringify(o.steps),
        JSON.stringify(o.pendingApprovals),
        o.error,
      ],
    );
    return rows.length === 1;
  }

  /**
   * One statement: the entries are inserted only while the lease holds the run, and only when no place they name holds
   * another entry (then none is, and the first such place is reported); a place that holds the same entry (a write made
   * again after its answer was lost) is left as it is.
   */
  async appendJournal(lease: AgentRunLease, entries: readonly RunJournalEntry[], leaseMs?: number): Promise<boolean> {
    const renew = leaseMs === undefined ? HELD : RENEWED(leaseMs);
    if (entries.length === 0) return (await this.rows(renew, [lease.runId, lease.owner, lease.attempt])).length === 1;
    const params: unknown[] = [lease.runId, lease.owner, lease.attempt];
    const values = entries.map((e) => {
      params.push(e.seq, e.kind, e.step, canonicalJson(e));
      const at = params.length - 3;
      return `($${at}::int, $${at + 1}::text, $${at + 2}::int, $${at + 3}::text)`;
    });
    const [row] = await this.rows(
      `WITH held AS (${renew}),
       v (seq, kind, step, entry) AS (VALUES ${values.join(', ')}),
       clash AS (SELECT j.seq FROM zmodu_agent_run_journal j JOIN v ON j.run_id = $1 AND j.seq = v.seq WHERE j.entry <> v.entry),
       added AS (
         INSERT INTO zmodu_agent_run_journal (run_id, tenant_id, seq, kind, step, entry)
         SELECT $1, held.tenant_id, v.seq, v.kind, v.step, v.entry FROM held, v WHERE NOT EXISTS (SELECT 1 FROM clash)
         ON CONFLICT (run_id, seq) DO NOTHING RETURNING seq
       )
       SELECT (SELECT count(*) FROM held)::int AS held, (SELECT min(seq) FROM clash) AS clash, (SELECT count(*) FROM added)::int AS added`,
      params,
    );
    if (Number(row.held) !== 1) return false;
    if (row.clash !== null && row.clash !== undefined) throw new RunJournalConflictException(lease.runId, Number(row.clash));
    return true;
  }

  async readJournal(tenantId: string, runId: string, page?: JournalPage): Promise<RunJournalEntry[]> {
    if (!tenantId) return [];
    const { afterSeq, limit } = journalPage(page);
    const rows = await this.rows(
      `SELECT entry FROM zmodu_agent_run_journal WHERE run_id = $1 AND tenant_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
      [runId, tenantId, afterSeq, limit],
    );
    return rows.map((r) => JSON.parse(String(r.entry)) as RunJournalEntry);
  }

  async suspend(lease: AgentRunLease, wait: AgentRunWait): Promise<boolean | 'full'> {
    if (wait.maxPerTenant !== undefined) return this.suspendBounded(lease, wait, wait.maxPerTenant);
    return this.suspendNow(this.dataSource.manager, lease, wait);
  }

  /**
   * The bound decided in one transaction: a transaction lock of the run's tenant's waits (every bounded suspend of the
   * tenant waits for the one before), then the count, then the write. Never count-then-write outside the lock.
   */
  private async suspendBounded(lease: AgentRunLease, wait: AgentRunWait, max: number): Promise<boolean | 'full'> {
    return this.dataSource.transaction(async (manager) => {
      const owned = (await manager.query(
        `SELECT tenant_id FROM zmodu_agent_runs WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running'`,
        [lease.runId, lease.owner, lease.attempt],
      )) as { tenant_id: string }[];
      if (owned.length !== 1) return false;
      const tenant = owned[0].tenant_id;
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('zmodu_agent_runs.waiting:' || $1, 0))`, [tenant]);
      const [{ n }] = (await manager.query(`SELECT count(*)::int AS n FROM zmodu_agent_runs WHERE tenant_id = $1 AND status = 'waiting'`, [
        tenant,
      ])) as { n: number }[];
      if (Number(n) >= max) return 'full';
      return this.suspendNow(manager, lease, wait);
    });
  }

  private async suspendNow(manager: EntityManager, lease: AgentRunLease, wait: AgentRunWait): Promise<boolean> {
    const rows = returning(
      await manager.query(
        `UPDATE zmodu_agent_runs SET status = 'waiting', lease_owner = NULL, lease_until = NULL, answer = $4, stopped_reason = 'waiting',
         steps = $5::jsonb, pending_approvals = $6::jsonb, waiting_for = $7::jsonb, wait_until = now() + ${MS('$8')}, decisions = '[]'::jsonb
       WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running' RETURNING id`,
        [
          lease.runId,
          lease.owner,
          lease.attempt,
          wait.answer,
          JSON.stringify(wait.steps),
          JSON.stringify(wait.pendingApprovals),
          JSON.stringify([...new Set(wait.proposalIds)]),
          wait.waitMs,
        ],
      ),
    );
    return rows.length === 1;
  }

  /**
   * Read the waiting run, add the new decisions, and write them back only if the decisions are still those read (a
   * conditional write): two instances settling one run at once both land their decisions, and the one whose write
   * completes the set moves the run to queued, once.
   */
  async settle(
    tenantId: string,
    runId: string,
    decisions: readonly AgentRunDecision[],
    options?: SettleOptions,
  ): Promise<{ resumed: boolean }> {
    for (let i = 0; i < SETTLE_TRIES; i++) {
      const run = await this.get(tenantId, runId);
      if (!run || run.status !== 'waiting') return { resumed: false };
      const waitingFor = run.waitingFor ?? [];
      const had = run.decisions ?? [];
      const known = new Map(had.map((d) => [d.proposalId, d]));
      for (const d of decisions)
        if (waitingFor.includes(d.proposalId) && !known.has(d.proposalId))
          known.set(d.proposalId, { proposalId: d.proposalId, status: d.status, observation: d.observation });
      const complete = options?.any === true ? known.size > 0 : waitingFor.every((id) => known.has(id));
      if (known.size === had.length && !complete) return { resumed: false };
      const rows = await this.rows(
        `UPDATE zmodu_agent_runs SET decisions = $3::jsonb,
           status = CASE WHEN $4::boolean THEN 'queued' ELSE status END,
           wait_until = CASE WHEN $4::boolean THEN NULL ELSE wait_until END,
           max_attempts = CASE WHEN $4::boolean THEN least(max_attempts + 1, ${MAX_RUN_ATTEMPTS}) ELSE max_attempts END
         WHERE id = $1 AND tenant_id = $2 AND status = 'waiting' AND decisions = $5::jsonb RETURNING id`,
        [runId, tenantId, JSON.stringify([...known.values()]), complete, JSON.stringify(had)],
      );
      if (rows.length === 1) return { resumed: complete };
    }
    return { resumed: false };
  }

  async waiting(limit: number, afterId?: string): Promise<AgentRunRecord[]> {
    const n = Math.max(0, Math.floor(limit));
    const rows =
      typeof afterId === 'string'
        ? await this.rows(`SELECT ${COLUMNS} FROM zmodu_agent_runs WHERE status = 'waiting' AND id > $2 ORDER BY id LIMIT $1`, [n, afterId])
        : await this.rows(`SELECT ${COLUMNS} FROM zmodu_agent_runs WHERE status = 'waiting' ORDER BY wait_until NULLS LAST, id LIMIT $1`, [
            n,
          ]);
    return rows.map(toRecord);
  }

  async release(lease: AgentRunLease, reason: string): Promise<boolean> {
    const rows = await this.rows(
      `UPDATE zmodu_agent_runs SET status = 'interrupted', lease_owner = NULL, lease_until = NULL, error = $4,
         max_attempts = LEAST(max_attempts + 1, $5)
       WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND status = 'running' RETURNING id`,
      [lease.runId, lease.owner, lease.attempt, reason, MAX_RUN_ATTEMPTS],
    );
    return rows.length === 1;
  }

  async recoverable(limit: number, clock: AgentRunClock): Promise<RecoverableRuns> {
    // One statement: the contact, then the lapsed leases taken back, except those an outage protects (see AgentRunClock).
    await this.rows(
      `WITH ${CONTACT('$2')}
       UPDATE zmodu_agent_runs r SET status = 'interrupted', lease_owner = NULL, lease_until = NULL, error = $1
       FROM contact c
       WHERE r.status = 'running' AND r.lease_until < now()
         AND NOT (c.outage_to IS NOT NULL AND r.lease_until > c.outage_from AND now() < c.outage_to + ${MS('$3')})
       RETURNING r.id`,
      [LEASE_EXPIRED_MESSAGE, clock.outageMs, clock.graceMs],
    );
    if (limit <= 0) return { interrupted: [], queued: [] };
    const rows = await this.rows(
      `(SELECT id, status FROM zmodu_agent_runs WHERE status = 'interrupted' ORDER BY created_at, id LIMIT $1)
       UNION ALL
       (SELECT id, status FROM zmodu_agent_runs WHERE status = 'queued' ORDER BY created_at, id LIMIT $1)`,
      [limit],
    );
    const of = (status: string) => rows.filter((r) => r.status === status).map((r) => String(r.id));
    return { interrupted: of('interrupted'), queued: of('queued') };
  }

  async mailbox(windowMs: number): Promise<AgentRunMailbox> {
    const [{ queued, claimed }] = await this.rows(
      `SELECT (SELECT count(*) FROM zmodu_agent_runs WHERE status IN ('queued', 'interrupted')) AS queued,
              (SELECT count(*) FROM zmodu_agent_runs WHERE claimed_at > now() - ${MS('$1')}) AS claimed`,
      [windowMs],
    );
    return { queued: Number(queued), claimed: Number(claimed) };
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
    waitingFor: (json(r.waiting_for) as string[] | null) ?? [],
    waitUntil: date(r.wait_until),
    decisions: (json(r.decisions) as AgentRunDecision[] | null) ?? [],
  };
}
