import type { SkillTransaction } from '@zmodu/skills/internal';
import type { OutboxCommandStamp, OutboxEvent, OutboxStatus } from './outbox.types';

export interface NewOutboxEvent {
  readonly tenantId: string | null;
  readonly topic: string;
  readonly payload: unknown;
  /** Unique per tenant when given (command.execute's key). */
  readonly idempotencyKey?: string | null;
  readonly maxAttempts: number;
  readonly command?: OutboxCommandStamp | null;
}

export interface OutboxListQuery {
  readonly status?: OutboxStatus;
  readonly page: number;
  readonly limit: number;
}

export interface OutboxPage {
  readonly items: OutboxEvent[];
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

export interface ClaimRequest {
  /** The claiming relay's name, kept with the lease. */
  readonly owner: string;
  /** At most this many events. */
  readonly limit: number;
  readonly leaseMs: number;
  /**
   * Per-topic caps: at most `limit - busy[topic]` events of one topic in this claim (a topic
   * whose cap is used up is not claimed at all), so one slow topic cannot fill every slot.
   */
  readonly perTopic?: { readonly limit: number; readonly busy: Readonly<Record<string, number>> };
  /** Claim only events of these topics (the relay's handlers): a relay never claims what it cannot deliver. Absent: every topic. */
  readonly topics?: readonly string[];
}

/** An event this claim owns, under `leaseToken` until the lease runs out. */
export interface ClaimedEvent {
  readonly event: OutboxEvent;
  readonly leaseToken: string;
}

/** The undelivered part of the outbox across all tenants, for metrics and health checks. */
export interface OutboxBacklog {
  /** Events waiting for delivery (status pending, due or not). */
  readonly pending: number;
  /** Events a relay is delivering now. */
  readonly delivering: number;
  /** Events whose attempts are used up (dead letters), until an admin retries them. */
  readonly dead: number;
  /** When the oldest event still pending or delivering was written; null when there is none. */
  readonly oldestPendingAt: Date | null;
}

export type DeliveredSettlement = 'delivered' | 'stale';
export type FailedSettlement = 'failed' | 'dead' | 'stale';

/**
 * Port: where outbox events live. The default is `TypeOrmOutboxStore` (PostgreSQL); a store of
 * your own must pass `outboxStoreContract` from `@zmodu/outbox/testing`.
 *
 * Leases: every claim takes a new lease token. `renew`, `settleFailed` and `reapExpired` act only
 * for the holder of the current, live lease (a conditional update on the token), so no relay
 * settles or buries an event another relay holds. `settleDelivered` is the one exception that
 * favours the truth over the fence: a delivery reported under an old token still wins over a
 * dead-lettering or a pending retry (the event *was* delivered), never over another live claim.
 */
export interface OutboxStore {
  /** Run `work` in a new transaction: it commits when `work` resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SkillTransaction) => Promise<T>): Promise<T>;
  /** Add an event in the caller's transaction; returns its id. */
  enqueue(tx: SkillTransaction, event: NewOutboxEvent): Promise<string>;
  /**
   * Take the lock of an idempotency key for the rest of `tx`: a second transaction asking for the
   * same key waits until the first commits or rolls back. Look the key up after taking it.
   */
  /**
   * Take the per-key lock in `tx` until it ends, waiting at most `waitMs` (default: as long as it
   * takes); false when the wait ran out (another caller holds the key).
   */
  lockKey(tx: SkillTransaction, lockName: string, waitMs?: number): Promise<boolean>;
  /** The event of an idempotency key (inside `tx` when given: after `lockKey`, it sees what the previous holder committed). */
  findByKey(tenantId: string | null, key: string, tx?: SkillTransaction): Promise<OutboxEvent | null>;
  get(tenantId: string, id: string): Promise<OutboxEvent | null>;
  /** Newest first. */
  list(tenantId: string, query: OutboxListQuery): Promise<OutboxPage>;
  /** A dead event back to pending with its attempts reset; null when there is no dead event of that id for the tenant. */
  retryDead(tenantId: string, id: string): Promise<OutboxEvent | null>;
  /**
   * Atomically claim due events (pending and due, or delivering under an expired lease with attempts
   * left): each gets a new lease token, `attempts + 1` and a lease of `leaseMs`. Concurrent claims
   * never return one event twice.
   */
  claim(request: ClaimRequest): Promise<ClaimedEvent[]>;
  /** Extend the lease to now + `leaseMs`, only under the current token of a delivering event; false when the lease is lost. */
  renew(id: string, leaseToken: string, leaseMs: number): Promise<boolean>;
  /** Mark delivered: under the current token of a delivering event, or over a dead or pending one (a late success wins). */
  settleDelivered(id: string, leaseToken: string): Promise<DeliveredSettlement>;
  /** Under the current token only: back to pending after `retryInMs`, or dead when the attempts are used up. */
  settleFailed(id: string, leaseToken: string, failure: { readonly error: string; readonly retryInMs: number }): Promise<FailedSettlement>;
  /**
   * Settle the events whose holder died on their last attempt (delivering, lease expired, no attempts
   * left): take the expired claim over (a new token) and dead-letter it in one statement. Returns how many.
   */
  reapExpired(): Promise<number>;
  /**
   * Optional: counts of undelivered events across all tenants (read by metrics at scrape time and by the outbox
   * health indicator). A store without it is reported as having no backlog figures.
   */
  backlog?(): Promise<OutboxBacklog>;
}
