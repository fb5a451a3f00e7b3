import { Inject, Injectable, Optional } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from './health-indicator.types';
import { OUTBOX_STORE } from '@zmodu/outbox/internal';
import { OutboxStore } from '@zmodu/outbox';

/** When the outbox counts as unhealthy. */
export interface OutboxHealthLimits {
  /** Most undelivered events (pending and delivering) before it is unhealthy. Default 10000. */
  readonly maxBacklog?: number;
  /** Longest an event may wait undelivered (ms, from when it was written) before it is unhealthy. Default 900000 (15 min). */
  readonly maxOldestPendingMs?: number;
  /** Most dead letters before it is unhealthy. Default: no limit (dead letters wait for an admin, not for this instance). */
  readonly maxDeadLetters?: number;
  /**
   * What a limit passed makes the indicator: 'down' (the health check fails: 503) or 'degraded' (up, with
   * `degraded: true` and the reasons, so readiness holds: the outbox is shared by every instance, and one slow
   * receiver should not take them all out of routing). Default 'down'.
   */
  readonly whenExceeded?: 'down' | 'degraded';
  /** How long the backlog read may take before the indicator is down (ms). Default 1500. */
  readonly timeoutMs?: number;
}

/**
 * A terminus health indicator of the transactional outbox: its backlog across tenants (`OutboxStore.backlog`),
 * against limits. Down when the store cannot be read in time or has no backlog figures; past a limit, down or
 * degraded (see `whenExceeded`). Never throws: a failure is a `down` result.
 */
@Injectable()
export class OutboxHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    @Optional() @Inject(OUTBOX_STORE) private readonly store?: OutboxStore,
  ) {}

  async isHealthy<const Key extends string>(key: Key, limits: OutboxHealthLimits = {}): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    const store = this.store;
    if (!store?.backlog) return indicator.down({ message: 'no outbox store with backlog figures (import OutboxModule)' });
    const maxBacklog = limits.maxBacklog ?? 10_000;
    const maxAgeMs = limits.maxOldestPendingMs ?? 15 * 60_000;
    const maxDead = limits.maxDeadLetters ?? Number.POSITIVE_INFINITY;
    let backlog;
    try {
      backlog = await withTimeout(store.backlog(), limits.timeoutMs ?? 1500);
    } catch (err) {
      return indicator.down({ message: `the outbox backlog could not be read: ${(err as Error)?.message ?? String(err)}` });
    }
    const open = backlog.pending + backlog.delivering;
    const ageMs = backlog.oldestPendingAt ? Math.max(0, Date.now() - backlog.oldestPendingAt.getTime()) : 0;
    const problems: string[] = [];
    if (open > maxBacklog) problems.push(`${open} events undelivered (limit ${maxBacklog})`);
    if (ageMs > maxAgeMs)
      problems.push(`the oldest undelivered event waits for ${Math.round(ageMs / 1000)} s (limit ${maxAgeMs / 1000} s)`);
    if (backlog.dead > maxDead) problems.push(`${backlog.dead} dead letters (limit ${maxDead})`);
    const details = {
      pending: backlog.pending,
      delivering: backlog.delivering,
      dead: backlog.dead,
      oldestPendingAgeSeconds: Math.round(ageMs / 1000),
    };
    if (problems.length === 0) return indicator.up(details);
    const message = problems.join('; ');
    return limits.whenExceeded === 'degraded'
      ? indicator.up({ ...details, degraded: true, message })
      : indicator.down({ ...details, message });
  }
}

/** `work`, or a rejection after `ms`. */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
