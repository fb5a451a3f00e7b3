import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { returning } from '../data/returning';
import { toEvent } from './outbox.service';
import { OutboxEvent, OutboxHandler } from './outbox.types';

export interface RelayOptions {
  /** This relay's name in the lease (default: a random id). */
  readonly owner?: string;
  readonly batchSize?: number;
  /** How long a claim is this relay's; after it, another relay may take the event over. Default 30000. */
  readonly leaseMs?: number;
  /** Retry delay: baseMs x 2^(attempt-1), at most maxMs. Defaults 1000 and 60000. */
  readonly backoff?: { readonly baseMs?: number; readonly maxMs?: number };
  /** A handler running longer is abandoned and the attempt fails. Default 30000. */
  readonly handlerTimeoutMs?: number;
  /** Poll interval of the running relay. Default 1000. */
  readonly pollIntervalMs?: number;
  /** Test hooks: throw RelayCrash to simulate the process dying at that point. */
  readonly hooks?: {
    readonly afterClaim?: (event: OutboxEvent) => void | Promise<void>;
    readonly afterDeliver?: (event: OutboxEvent) => void | Promise<void>;
  };
}

/** Thrown by a hook to simulate the relay's process dying: it stops at once and settles nothing. */
export class RelayCrash extends Error {
  constructor(where: string) {
    super(`relay crashed ${where}`);
    this.name = 'RelayCrash';
  }
}

export interface RelayPass {
  readonly claimed: number;
  readonly delivered: number;
  readonly failed: number;
  readonly dead: number;
  /** Settlements refused because a newer claim owns the event (fencing). */
  readonly stale: number;
}

/**
 * Delivers outbox events to their handlers at least once. Claims are atomic in the database
 * (UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED)), so several relays share the work;
 * every claim takes a new lease token, and a settlement only applies under the token it was
 * claimed with, so a relay whose lease expired cannot settle what a newer relay now owns.
 */
export class OutboxRelay {
  private readonly logger = new Logger('OutboxRelay');
  readonly owner: string;
  private readonly handlers = new Map<string, OutboxHandler>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<RelayPass> | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: RelayOptions = {},
  ) {
    this.owner = options.owner ?? `relay-${randomUUID().slice(0, 8)}`;
  }

  on(topic: string, handler: OutboxHandler): void {
    if (this.handlers.has(topic)) throw new Error(`Outbox topic '${topic}' already has a handler.`);
    this.handlers.set(topic, handler);
  }

  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.running ??= this.runOnce()
        .catch((err) => {
          this.logger.error(`relay pass failed: ${String(err)}`);
          return { claimed: 0, delivered: 0, failed: 0, dead: 0, stale: 0 };
        })
        .finally(() => (this.running = null));
    };
    this.timer = setInterval(tick, this.options.pollIntervalMs ?? 1000);
    this.timer.unref();
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One pass: claim due events, deliver each, settle each under its lease token. */
  async runOnce(): Promise<RelayPass> {
    const pass = { claimed: 0, delivered: 0, failed: 0, dead: 0, stale: 0 };
    pass.dead += await this.buryExpired();
    const leaseMs = this.options.leaseMs ?? 30_000;
    const claimed = returning(
      await this.dataSource.query(
        `UPDATE zmodu_outbox o SET status = 'delivering', attempts = o.attempts + 1, lease_owner = $1, lease_token = o.lease_token + 1,
                lease_until = now() + make_interval(secs => $2::double precision / 1000)
         WHERE o.id IN (
           SELECT id FROM zmodu_outbox
           WHERE (status = 'pending' AND next_attempt_at <= now()) OR (status = 'delivering' AND lease_until < now() AND attempts < max_attempts)
           ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING o.*`,
        [this.owner, leaseMs, this.options.batchSize ?? 10],
      ),
    );
    pass.claimed = claimed.length;
    for (const row of claimed) {
      const event = toEvent(row);
      const token = String(row.lease_token);
      await this.options.hooks?.afterClaim?.(event);
      const error = await this.deliver(event, token);
      if (error === null) await this.options.hooks?.afterDeliver?.(event);
      const settled = error === null ? await this.settleDelivered(event.id, token) : await this.settleFailed(event, token, error);
      if (settled === 'stale') pass.stale++;
      else if (settled === 'delivered') pass.delivered++;
      else if (settled === 'dead') pass.dead++;
      else pass.failed++;
    }
    return pass;
  }

  private async deliver(event: OutboxEvent, token: string): Promise<string | null> {
    const handler = this.handlers.get(event.topic);
    if (!handler) return `no handler for topic '${event.topic}'`;
    const controller = new AbortController();
    const timeoutMs = this.options.handlerTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve(`handler timed out after ${timeoutMs} ms`);
      }, timeoutMs);
    });
    try {
      const work = Promise.resolve().then(() => handler(event, { leaseToken: token, attempt: event.attempts, signal: controller.signal }));
      work.catch(() => undefined);
      const outcome = await Promise.race([work.then(() => null), timeout]);
      return outcome;
    } catch (err) {
      if (err instanceof RelayCrash) throw err;
      return (err instanceof Error ? err.message : String(err)).slice(0, 1000);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async settleDelivered(id: string, token: string): Promise<'delivered' | 'stale'> {
    const rows = returning(
      await this.dataSource.query(
        `UPDATE zmodu_outbox SET status = 'delivered', delivered_at = now(), lease_owner = NULL, lease_until = NULL, last_error = NULL
         WHERE id = $1 AND lease_token = $2 AND status = 'delivering' RETURNING id`,
        [id, token],
      ),
    );
    if (rows.length === 0) {
      this.logger.warn(`event ${id}: a newer claim owns it; this relay's delivery is not settled (fenced)`);
      return 'stale';
    }
    return 'delivered';
  }

  private async settleFailed(event: OutboxEvent, token: string, error: string): Promise<'failed' | 'dead' | 'stale'> {
    const base = this.options.backoff?.baseMs ?? 1000;
    const max = this.options.backoff?.maxMs ?? 60_000;
    const delay = Math.min(max, base * 2 ** Math.max(0, event.attempts - 1));
    const rows = returning(
      await this.dataSource.query(
        `UPDATE zmodu_outbox SET status = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'pending' END,
                next_attempt_at = now() + make_interval(secs => $3::double precision / 1000), last_error = $4, lease_owner = NULL, lease_until = NULL
         WHERE id = $1 AND lease_token = $2 AND status = 'delivering' RETURNING status`,
        [event.id, token, delay, error],
      ),
    );
    if (rows.length === 0) return 'stale';
    if (rows[0].status === 'dead') this.logger.warn(`event ${event.id} (${event.topic}) is dead-lettered after ${event.attempts} attempts: ${error}`);
    return rows[0].status === 'dead' ? 'dead' : 'failed';
  }

  /** A claim whose lease expired on its last attempt: dead-letter it (its outcome is unknown). */
  private async buryExpired(): Promise<number> {
    return returning(
      await this.dataSource.query(
        `UPDATE zmodu_outbox SET status = 'dead', last_error = coalesce(last_error, 'the lease of the last attempt expired'), lease_owner = NULL, lease_until = NULL
         WHERE status = 'delivering' AND lease_until < now() AND attempts >= max_attempts RETURNING id`,
      ),
    ).length;
  }
}
