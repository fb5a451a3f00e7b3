import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { queryRows } from '@zmodu/core';
import { SkillTransaction, transactionOf } from '@zmodu/skills/internal';
import {
  ClaimedEvent,
  ClaimRequest,
  DeliveredSettlement,
  FailedSettlement,
  NewOutboxEvent,
  OutboxBacklog,
  OutboxListQuery,
  OutboxPage,
  OutboxStore,
} from './outbox.store';
import { OutboxEvent, OutboxStatus } from './outbox.types';

const COLUMNS =
  'id, tenant_id, topic, payload, idempotency_key, status, attempts, max_attempts, next_attempt_at, last_error, created_at, delivered_at, command_name, command_hash';
/** Seconds from a millisecond parameter, for `now() + ...`. */
const MS = (p: string) => `make_interval(secs => ${p}::double precision / 1000)`;
/** Caps of at most this many events per topic in one claim when the caller sets none. */
const NO_CAP = 2_147_483_647;

/**
 * The outbox on PostgreSQL (or PGlite) through TypeORM: the table of ZMODU_OUTBOX_MIGRATIONS.
 * Claims are one atomic statement (UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED)); every
 * lease-bound change is a conditional UPDATE on the lease token; the key lock is a transaction-scoped
 * advisory lock on the key's 64-bit hash.
 */
export class TypeOrmOutboxStore implements OutboxStore {
  constructor(private readonly dataSource: DataSource) {}

  transaction<T>(work: (tx: SkillTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(transactionOf(manager)));
  }

  async enqueue(tx: SkillTransaction, e: NewOutboxEvent): Promise<string> {
    const id = randomUUID();
    await tx.query(
      `INSERT INTO zmodu_outbox (id, tenant_id, topic, payload, idempotency_key, max_attempts, command_name, command_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        id,
        e.tenantId,
        e.topic,
        JSON.stringify(e.payload ?? null),
        e.idempotencyKey ?? null,
        e.maxAttempts,
        e.command?.name ?? null,
        e.command?.argsHash ?? null,
      ],
    );
    return id;
  }

  async lockKey(tx: SkillTransaction, lockName: string, waitMs?: number): Promise<boolean> {
    // lock_timeout bounds the wait (a waiter holds a pooled connection); 55P03 is its expiry.
    if (waitMs !== undefined) await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${Math.max(1, Math.round(waitMs))}ms`]);
    try {
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))::text AS locked', [lockName]);
    } catch (err) {
      const code = (err as { code?: string; driverError?: { code?: string } })?.driverError?.code ?? (err as { code?: string })?.code;
      if (code === '55P03') return false;
      throw err;
    }
    if (waitMs !== undefined) await tx.query(`SELECT set_config('lock_timeout', '0', true)`);
    return true;
  }

  async findByKey(tenantId: string | null, key: string, tx?: SkillTransaction): Promise<OutboxEvent | null> {
    const sql = `SELECT ${COLUMNS} FROM zmodu_outbox WHERE tenant_id IS NOT DISTINCT FROM $1 AND idempotency_key = $2`;
    const rows = tx ? await tx.query(sql, [tenantId, key]) : await queryRows(this.dataSource, sql, [tenantId, key]);
    return rows.length ? toEvent(rows[0]) : null;
  }

  async get(tenantId: string, id: string): Promise<OutboxEvent | null> {
    const rows = await queryRows(this.dataSource, `SELECT ${COLUMNS} FROM zmodu_outbox WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return rows.length ? toEvent(rows[0]) : null;
  }

  async list(tenantId: string, query: OutboxListQuery): Promise<OutboxPage> {
    const where = `tenant_id = $1 AND ($2::text IS NULL OR status = $2)`;
    const [{ n }] = await queryRows(this.dataSource, `SELECT count(*) AS n FROM zmodu_outbox WHERE ${where}`, [
      tenantId,
      query.status ?? null,
    ]);
    const rows = await queryRows(
      this.dataSource,
      `SELECT ${COLUMNS} FROM zmodu_outbox WHERE ${where} ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
      [tenantId, query.status ?? null, query.limit, (query.page - 1) * query.limit],
    );
    return { items: rows.map(toEvent), total: Number(n), page: query.page, limit: query.limit };
  }

  async retryDead(tenantId: string, id: string): Promise<OutboxEvent | null> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE zmodu_outbox SET status = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL
       WHERE id = $1 AND tenant_id = $2 AND status = 'dead' RETURNING ${COLUMNS}`,
      [id, tenantId],
    );
    return rows.length ? toEvent(rows[0]) : null;
  }

  async claim(request: ClaimRequest): Promise<ClaimedEvent[]> {
    if (request.limit <= 0) return [];
    // Remaining room per topic (0 = that topic is not claimed at all); topics not named get the per-topic limit.
    const caps: Record<string, number> = {};
    for (const [topic, busy] of Object.entries(request.perTopic?.busy ?? {}))
      caps[topic] = Math.max(0, (request.perTopic?.limit ?? NO_CAP) - busy);
    const defaultCap = request.perTopic?.limit ?? NO_CAP;
    // With caps, look a little further than `limit` rows so that a capped topic at the head does not leave the claim empty.
    const scan = request.perTopic ? request.limit * 4 : request.limit;
    const rows = await queryRows(
      this.dataSource,
      `WITH candidates AS (
         SELECT id, topic, next_attempt_at FROM zmodu_outbox
         WHERE ((status = 'pending' AND next_attempt_at <= now()) OR (status = 'delivering' AND lease_until < now() AND attempts < max_attempts))
           AND coalesce(($4::jsonb ->> topic)::int, $5::int) > 0
           AND ($7::text[] IS NULL OR topic = ANY ($7::text[]))
         ORDER BY next_attempt_at LIMIT $6 FOR UPDATE SKIP LOCKED),
       picked AS (
         SELECT id FROM (SELECT id, next_attempt_at, row_number() OVER (PARTITION BY topic ORDER BY next_attempt_at, id) AS n,
                                coalesce(($4::jsonb ->> topic)::int, $5::int) AS cap FROM candidates) c
         WHERE n <= cap ORDER BY next_attempt_at LIMIT $3)
       UPDATE zmodu_outbox o SET status = 'delivering', attempts = o.attempts + 1, lease_owner = $1, lease_token = o.lease_token + 1,
              lease_until = now() + ${MS('$2')}
       FROM picked WHERE o.id = picked.id
       RETURNING o.${COLUMNS.split(', ').join(', o.')}, o.lease_token`,
      [request.owner, request.leaseMs, request.limit, JSON.stringify(caps), defaultCap, scan, request.topics ? [...request.topics] : null],
    );
    return rows
      .map((row) => ({ event: toEvent(row), leaseToken: String(row.lease_token) }))
      .sort((a, b) => a.event.nextAttemptAt.getTime() - b.event.nextAttemptAt.getTime());
  }

  async renew(id: string, leaseToken: string, leaseMs: number): Promise<boolean> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE zmodu_outbox SET lease_until = now() + ${MS('$3')} WHERE id = $1 AND lease_token = $2 AND status = 'delivering' RETURNING id`,
      [id, leaseToken, leaseMs],
    );
    return rows.length === 1;
  }

  async settleDelivered(id: string, leaseToken: string): Promise<DeliveredSettlement> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE zmodu_outbox SET status = 'delivered', delivered_at = now(), lease_owner = NULL, lease_until = NULL, last_error = NULL
       WHERE id = $1 AND ((status = 'delivering' AND lease_token = $2) OR (status IN ('pending', 'dead') AND lease_token >= $2)) RETURNING id`,
      [id, leaseToken],
    );
    return rows.length === 1 ? 'delivered' : 'stale';
  }

  async settleFailed(
    id: string,
    leaseToken: string,
    failure: { readonly error: string; readonly retryInMs: number },
  ): Promise<FailedSettlement> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE zmodu_outbox SET status = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'pending' END,
              next_attempt_at = now() + ${MS('$3')}, last_error = $4, lease_owner = NULL, lease_until = NULL
       WHERE id = $1 AND lease_token = $2 AND status = 'delivering' RETURNING status`,
      [id, leaseToken, failure.retryInMs, failure.error],
    );
    if (rows.length === 0) return 'stale';
    return rows[0].status === 'dead' ? 'dead' : 'failed';
  }

  async reapExpired(): Promise<number> {
    const rows = await queryRows(
      this.dataSource,
      `UPDATE zmodu_outbox SET status = 'dead', lease_token = lease_token + 1, lease_owner = NULL, lease_until = NULL,
              last_error = 'the lease of the last attempt expired before its relay settled it'
       WHERE status = 'delivering' AND lease_until < now() AND attempts >= max_attempts RETURNING id`,
    );
    return rows.length;
  }

  async backlog(): Promise<OutboxBacklog> {
    // Undelivered rows through the partial index on (next_attempt_at) WHERE status IN ('pending', 'delivering').
    const [open] = await queryRows(
      this.dataSource,
      `SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'delivering') AS delivering,
              min(created_at) AS oldest
       FROM zmodu_outbox WHERE status IN ('pending', 'delivering')`,
    );
    const [dead] = await queryRows(this.dataSource, `SELECT count(*) AS n FROM zmodu_outbox WHERE status = 'dead'`);
    return {
      pending: Number(open.pending),
      delivering: Number(open.delivering),
      dead: Number(dead.n),
      oldestPendingAt: open.oldest ? new Date(open.oldest as string) : null,
    };
  }
}

export function toEvent(r: Record<string, unknown>): OutboxEvent {
  return {
    id: String(r.id),
    tenantId: (r.tenant_id as string | null) ?? null,
    topic: String(r.topic),
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    idempotencyKey: (r.idempotency_key as string | null) ?? null,
    status: r.status as OutboxStatus,
    attempts: Number(r.attempts),
    maxAttempts: Number(r.max_attempts),
    nextAttemptAt: new Date(r.next_attempt_at as string),
    lastError: (r.last_error as string | null) ?? null,
    createdAt: new Date(r.created_at as string),
    deliveredAt: r.delivered_at ? new Date(r.delivered_at as string) : null,
    command: r.command_name ? { name: String(r.command_name), argsHash: String(r.command_hash) } : null,
  };
}
