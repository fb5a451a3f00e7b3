import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { returning } from '../data/returning';
import { OutboxEvent, OutboxStatus } from './outbox.types';

const COLUMNS = 'id, tenant_id, topic, payload, idempotency_key, status, attempts, max_attempts, next_attempt_at, last_error, created_at, delivered_at';
const STATUSES: readonly OutboxStatus[] = ['pending', 'delivering', 'delivered', 'dead'];

export interface EnqueueInput {
  readonly tenantId: string | null;
  readonly topic: string;
  readonly payload: unknown;
  readonly idempotencyKey?: string;
  readonly maxAttempts?: number;
}

export class OutboxConflictException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboxConflictException';
  }
}

/** Writes events in the caller's transaction, and reads them back for admins. */
export class OutboxService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly defaultMaxAttempts = 5,
  ) {}

  /** Add an event in `manager`'s transaction: it commits, or rolls back, with the business write. */
  async enqueue(manager: EntityManager, input: EnqueueInput): Promise<string> {
    if (typeof input.topic !== 'string' || input.topic === '') throw new Error('an outbox event needs a topic');
    const id = randomUUID();
    await manager.query(
      `INSERT INTO zmodu_outbox (id, tenant_id, topic, payload, idempotency_key, max_attempts) VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, input.tenantId, input.topic, JSON.stringify(input.payload ?? null), input.idempotencyKey ?? null, input.maxAttempts ?? this.defaultMaxAttempts],
    );
    return id;
  }

  async findByKey(tenantId: string | null, key: string, manager: EntityManager = this.dataSource.manager): Promise<OutboxEvent | null> {
    const rows = await manager.query(`SELECT ${COLUMNS} FROM zmodu_outbox WHERE tenant_id IS NOT DISTINCT FROM $1 AND idempotency_key = $2`, [tenantId, key]);
    return rows.length ? toEvent(rows[0]) : null;
  }

  async get(tenantId: string, id: string): Promise<OutboxEvent | null> {
    const rows = await this.dataSource.query(`SELECT ${COLUMNS} FROM zmodu_outbox WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return rows.length ? toEvent(rows[0]) : null;
  }

  async list(tenantId: string, query: { status?: OutboxStatus; page?: number; limit?: number } = {}): Promise<{ items: OutboxEvent[]; total: number; page: number; limit: number }> {
    const page = query.page ?? 1;
    const limit = Math.min(100, query.limit ?? 20);
    if (query.status !== undefined && !STATUSES.includes(query.status)) throw new RangeError(`status must be one of ${STATUSES.join(', ')}`);
    const where = `tenant_id = $1 AND ($2::text IS NULL OR status = $2)`;
    const [{ n }] = await this.dataSource.query(`SELECT count(*) AS n FROM zmodu_outbox WHERE ${where}`, [tenantId, query.status ?? null]);
    const rows = await this.dataSource.query(`SELECT ${COLUMNS} FROM zmodu_outbox WHERE ${where} ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`, [
      tenantId,
      query.status ?? null,
      limit,
      (page - 1) * limit,
    ]);
    return { items: rows.map(toEvent), total: Number(n), page, limit };
  }

  /** Put a dead-lettered event back in the queue (an admin's retry): its attempts start again. */
  async retry(tenantId: string, id: string): Promise<OutboxEvent | null> {
    const rows = await this.dataSource.query(
      `UPDATE zmodu_outbox SET status = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL WHERE id = $1 AND tenant_id = $2 AND status = 'dead' RETURNING ${COLUMNS}`,
      [id, tenantId],
    );
    const updated = returning(rows);
    if (updated.length) return toEvent(updated[0]);
    const existing = await this.get(tenantId, id);
    if (!existing) return null;
    throw new OutboxConflictException(`Event ${id} is ${existing.status}, not dead: only a dead-lettered event can be retried.`);
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
  };
}
