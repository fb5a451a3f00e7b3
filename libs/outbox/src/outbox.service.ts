import type { SkillTransaction } from '@zmodu/skills/internal';
import { InvalidOutboxEventException } from './exceptions/invalid-outbox-event.exception';
import { InvalidOutboxQueryException } from './exceptions/invalid-outbox-query.exception';
import { OutboxConflictException } from './exceptions/outbox-conflict.exception';
import { INVALID_OUTBOX_STATUS_MESSAGE } from './outbox.messages';
import { DEFAULT_MAX_ATTEMPTS } from './outbox.options';
import { OutboxPage, OutboxStore } from './outbox.store';
import { OutboxEvent, OutboxStatus } from './outbox.types';

const STATUSES: readonly OutboxStatus[] = ['pending', 'delivering', 'delivered', 'dead'];

export interface EnqueueInput {
  readonly tenantId: string | null;
  readonly topic: string;
  readonly payload: unknown;
  /** Unique per tenant: a second event with the same key fails the transaction. */
  readonly idempotencyKey?: string;
  readonly maxAttempts?: number;
}

/** Writes events in the caller's transaction, and reads them back for admins. All storage goes through the OutboxStore port. */
export class OutboxService {
  constructor(
    private readonly store: OutboxStore,
    private readonly defaultMaxAttempts = DEFAULT_MAX_ATTEMPTS,
  ) {}

  /** Add an event in the caller's transaction (`tx`): it commits, or rolls back, with the business write. */
  async enqueue(tx: SkillTransaction, input: EnqueueInput): Promise<string> {
    if (typeof input.topic !== 'string' || input.topic === '') throw new InvalidOutboxEventException();
    return this.store.enqueue(tx, { ...input, maxAttempts: input.maxAttempts ?? this.defaultMaxAttempts });
  }

  /** Add an event in a transaction of its own (when there is no business write to commit it with). */
  publish(input: EnqueueInput): Promise<string> {
    return this.store.transaction((tx) => this.enqueue(tx, input));
  }

  findByKey(tenantId: string | null, key: string): Promise<OutboxEvent | null> {
    return this.store.findByKey(tenantId, key);
  }

  get(tenantId: string, id: string): Promise<OutboxEvent | null> {
    return this.store.get(tenantId, id);
  }

  list(tenantId: string, query: { status?: OutboxStatus; page?: number; limit?: number } = {}): Promise<OutboxPage> {
    if (query.status !== undefined && !STATUSES.includes(query.status))
      throw new InvalidOutboxQueryException('status', INVALID_OUTBOX_STATUS_MESSAGE(STATUSES));
    return this.store.list(tenantId, { status: query.status, page: query.page ?? 1, limit: Math.min(100, query.limit ?? 20) });
  }

  /** Put a dead-lettered event back in the queue (an admin's retry): its attempts start again. */
  async retry(tenantId: string, id: string): Promise<OutboxEvent | null> {
    const updated = await this.store.retryDead(tenantId, id);
    if (updated) return updated;
    const existing = await this.store.get(tenantId, id);
    if (!existing) return null;
    throw new OutboxConflictException(id, existing.status);
  }
}
