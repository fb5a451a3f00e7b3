import { Logger } from '@nestjs/common';
import type { RuntimeEvents } from '../events/runtime-events';
import { BufferedFlusher } from '../buffered-flusher';
import { MAX_CHARGE_TOKENS, QuotaKey, TokenQuotaStore } from './token-quota.store';

export type QuotaPeriod = 'day' | 'month' | 'total';

/** Fair use: what one user of a tenant may spend of the tenant's period budget for an agent. */
export interface UserShare {
  /** A fraction (0 < share <= 1) of the tenant's limit for the agent. */
  readonly userShare?: number;
  /** An amount of tokens per user and period. With both, the smaller applies. */
  readonly userLimit?: number;
}

export interface TokenQuotaOptions extends UserShare {
  /** Token limit per tenant and agent for one period, unless an agent sets its own. Unset: unlimited. */
  readonly defaultLimit?: number;
  /** The window a limit applies to (UTC). Default 'day'. */
  readonly period?: QuotaPeriod;
  /**
   * Charges the store refused, kept (summed per tenant, agent, user and period) for retry. Past it the oldest are
   * dropped and counted. Default 10000.
   */
  readonly maxPendingCharges?: number;
  /** First wait before retrying refused charges (ms); it doubles while the store fails. Default 1000. */
  readonly retryIntervalMs?: number;
  /** Longest wait between retries (ms). Default 30000. */
  readonly maxRetryIntervalMs?: number;
  /** Attempts of the last retry at shutdown while the store is failing. Default 3. */
  readonly closeAttempts?: number;
}

/** Which budget ran out: the tenant's period budget for the agent, or the user's share of it. */
export type QuotaBudget = 'tenant' | 'user';

export interface QuotaStatus {
  readonly allowed: boolean;
  /** The tenant's tokens used this period. */
  readonly used: number;
  /** The tenant's limit; Infinity when no limit applies. */
  readonly limit: number;
  /** What may still be spent: the smaller of the tenant's and (with a user) the user's remainder. */
  readonly remaining: number;
  readonly period: string;
  /** The budget that ran out, null while allowed. */
  readonly exhausted: QuotaBudget | null;
  /** The user's share, when the key names a user and a share applies. */
  readonly user?: { readonly userId: string; readonly used: number; readonly limit: number; readonly remaining: number };
  /** Tokens `check(key, reserve)` charged already, as the call's admission (0 when nothing was reserved). */
  readonly reserved: number;
}

/** Counters of the charge retry queue. */
export interface TokenQuotaMetrics {
  /** Charges waiting for the store (summed per key and period), and their tokens. */
  readonly pendingCharges: number;
  readonly pendingTokens: number;
  /** Charges the store refused at first, queued for retry. */
  readonly queuedCharges: number;
  /** Queued charges written on a retry. */
  readonly retriedCharges: number;
  /** Charges dropped (queue overflow, oldest first, or still unwritten at the end of close()), and their tokens. */
  readonly droppedCharges: number;
  readonly droppedTokens: number;
  /** Charges the store said were invalid on their own (`refusesCharge`): set aside and logged, never retried. And their tokens. */
  readonly rejectedCharges: number;
  readonly rejectedTokens: number;
}

interface PendingCharge {
  readonly key: QuotaKey;
  readonly period: string;
  tokens: number;
}

/**
 * Token quota per tenant and per agent, with optional per-user shares, kept in a store
 * (PostgreSQL by default) so that it survives a restart. Checked before a call, charged after it.
 * A charge whose write fails (`chargeQuietly`: an outage, a lock timeout, a trigger) is queued, retried with backoff and
 * flushed at shutdown (`close`), so an outage does not under-count usage. A charge the store says is invalid on its own
 * (`store.refusesCharge`) can never be written: it is set aside (counted, logged) instead, so it cannot hold up the queued
 * charges behind it. A count above MAX_CHARGE_TOKENS (a hostile model server's usage) is charged as MAX_CHARGE_TOKENS.
 */
export class TokenQuota {
  private readonly logger = new Logger('TokenQuota');
  private readonly limits = new Map<string, number>();
  private readonly shares = new Map<string, UserShare>();
  private readonly period: QuotaPeriod;
  private readonly pendingCharges = new Map<string, PendingCharge>();
  /**
   * Tokens `check(key, reserve)` charged ahead for calls still to be charged, per key and period: the next charges of
   * the key (`chargeQuietly`) are taken from them first, so that a call's reservation and its charge add up to its tokens.
   */
  private readonly reservations = new Map<string, { period: string; tokens: number }>();
  private readonly maxPending: number;
  private readonly flusher: BufferedFlusher;
  private seq = 0;
  private counters = { queuedCharges: 0, retriedCharges: 0, droppedCharges: 0, droppedTokens: 0, rejectedCharges: 0, rejectedTokens: 0 };

  constructor(
    private readonly store: TokenQuotaStore,
    private readonly options: TokenQuotaOptions = {},
    private readonly now: () => Date = () => new Date(),
    /** Told of every charge (a `tokens` event), e.g. for metrics. */
    private readonly events?: RuntimeEvents,
  ) {
    this.period = options.period ?? 'day';
    if (options.defaultLimit !== undefined) assertLimit(options.defaultLimit);
    assertShare(options);
    this.maxPending = Math.max(1, options.maxPendingCharges ?? 10_000);
    const intervalMs = Math.max(1, options.retryIntervalMs ?? 1000);
    this.flusher = new BufferedFlusher({
      intervalMs,
      maxIntervalMs: Math.max(intervalMs, options.maxRetryIntervalMs ?? 30_000),
      closeAttempts: Math.max(1, options.closeAttempts ?? 3),
      hasPending: () => this.pendingCharges.size > 0,
      drain: () => this.drain(),
      dropPending: (err) => {
        const left = [...this.pendingCharges.values()];
        this.pendingCharges.clear();
        const tokens = left.reduce((n, c) => n + c.tokens, 0);
        this.counters.droppedCharges += left.length;
        this.counters.droppedTokens += tokens;
        this.logger.error(
          `token quota store still failing at shutdown: ${left.length} charges (${tokens} tokens) not written: ${String(err)}`,
        );
      },
    });
  }

  /** Set the per-period limit of one agent (every tenant gets this much); undefined removes it. */
  setAgentLimit(agent: string, limit: number | undefined): void {
    if (limit === undefined) this.limits.delete(agent);
    else {
      assertLimit(limit);
      this.limits.set(agent, limit);
    }
  }

  /** Set the per-user share of one agent's tenant budget (over the module's default); undefined removes it. */
  setAgentUserShare(agent: string, share: UserShare | undefined): void {
    if (share === undefined || (share.userShare === undefined && share.userLimit === undefined)) this.shares.delete(agent);
    else {
      assertShare(share);
      this.shares.set(agent, { ...share });
    }
  }

  limitFor(key: QuotaKey): number {
    return this.limits.get(key.agent) ?? this.options.defaultLimit ?? Number.POSITIVE_INFINITY;
  }

  /** What one user may spend per period of the agent's tenant budget: Infinity when no share applies. */
  userLimitFor(key: QuotaKey): number {
    const share = this.shares.get(key.agent) ?? this.options;
    const tenantLimit = this.limitFor(key);
    let limit = Number.POSITIVE_INFINITY;
    if (share.userShare !== undefined && Number.isFinite(tenantLimit)) limit = Math.floor(share.userShare * tenantLimit);
    if (share.userLimit !== undefined) limit = Math.min(limit, share.userLimit);
    return limit;
  }

  /** The current period's name: '2026-11-30' for 'day', '2026-11' for 'month', 'total'. */
  currentPeriod(): string {
    const iso = this.now().toISOString();
    if (this.period === 'day') return iso.slice(0, 10);
    if (this.period === 'month') return iso.slice(0, 7);
    return 'total';
  }

  /**
   * Whether `key` may spend more tokens now, and which budget ran out if not (`exhausted`).
   * No store read when no limit applies. Charges queued for retry count as used. Throws when
   * the store cannot be read (the caller decides: the dispatcher and the agent refuse, with
   * their own cause `quota_unavailable`).
   *
   * With `reserve` (a call's cost, known before it runs) and a limit that applies, the check is the store's atomic
   * `admit`: allowed only if the budget has room, and then `reserve` is charged at once (`reserved`), so that callers at
   * once cannot all pass a budget that has room for one (they would, reading first and charging after the call). The
   * caller charges the call's tokens after it with `chargeQuietly` as usual: what was reserved is taken off that charge.
   */
  async check(key: QuotaKey, reserve = 0): Promise<QuotaStatus> {
    const k = normalize(key);
    const limit = this.limitFor(k);
    const userLimit = k.userId ? this.userLimitFor(k) : Number.POSITIVE_INFINITY;
    const period = this.currentPeriod();
    const tenantKey = { tenantId: k.tenantId, agent: k.agent };
    const tokens = Math.min(reserve, MAX_CHARGE_TOKENS);
    if (tokens > 0 && Number.isFinite(tokens) && this.store.admit && (Number.isFinite(limit) || Number.isFinite(userLimit))) {
      // Queued charges count as used: the limits the store compares with are lowered by them.
      const pending = this.pendingTokens(tenantKey, period);
      const userPending = this.pendingTokens(k, period);
      const admission = await this.store.admit(k, period, tokens, { tenant: limit - pending, user: userLimit - userPending });
      if (admission.admitted) {
        this.events?.emit({ type: 'tokens', tenantId: k.tenantId, agent: k.agent, tokens });
        this.reserve(k, period, tokens);
      }
      const used = Number.isFinite(limit) ? admission.tenant + pending : 0;
      const userUsed = Number.isFinite(userLimit) ? (admission.user ?? 0) + userPending : 0;
      // Refused by the store's own count: which budget ran out is the tenant's unless only the user's is spent.
      const exhausted: QuotaBudget | null = admission.admitted ? null : used >= limit || admission.user === null ? 'tenant' : 'user';
      return { ...this.statusOf(k, limit, userLimit, period, used, userUsed, exhausted), reserved: admission.admitted ? tokens : 0 };
    }
    const used = Number.isFinite(limit) ? (await this.store.used(tenantKey, period)) + this.pendingTokens(tenantKey, period) : 0;
    const userUsed = Number.isFinite(userLimit) ? (await this.store.used(k, period)) + this.pendingTokens(k, period) : 0;
    const exhausted: QuotaBudget | null = used >= limit ? 'tenant' : userUsed >= userLimit ? 'user' : null;
    return this.statusOf(k, limit, userLimit, period, used, userUsed, exhausted);
  }

  private statusOf(
    k: QuotaKey,
    limit: number,
    userLimit: number,
    period: string,
    used: number,
    userUsed: number,
    exhausted: QuotaBudget | null,
  ): QuotaStatus {
    const remaining = Math.max(0, Math.min(limit - used, userLimit - userUsed));
    return {
      allowed: exhausted === null,
      used,
      limit,
      remaining,
      period,
      exhausted,
      ...(k.userId && Number.isFinite(userLimit)
        ? { user: { userId: k.userId, used: userUsed, limit: userLimit, remaining: Math.max(0, userLimit - userUsed) } }
        : {}),
      reserved: 0,
    };
  }

  /** Charge tokens after a call (the tenant and, with `userId`, the user, atomically). Returns the tenant's new total. */
  async charge(key: QuotaKey, tokens: number): Promise<number> {
    if (!(tokens >= 0) || !Number.isFinite(tokens)) throw new RangeError(`tokens must be a finite number >= 0 (got ${tokens})`);
    const k = normalize(key);
    const total = await this.store.charge(k, this.currentPeriod(), Math.min(tokens, MAX_CHARGE_TOKENS));
    if (tokens > 0) this.events?.emit({ type: 'tokens', tenantId: k.tenantId, agent: k.agent, tokens });
    return total;
  }

  /**
   * Charge without throwing (metering must not fail a call that already ran). A charge the store
   * refuses is queued for its period, retried with backoff and flushed at shutdown; counted in metrics().
   */
  async chargeQuietly(key: QuotaKey, tokens: number): Promise<void> {
    if (!(tokens > 0) || !Number.isFinite(tokens)) return;
    tokens = Math.min(tokens, MAX_CHARGE_TOKENS);
    const k = normalize(key);
    const period = this.currentPeriod();
    // What check(key, reserve) charged ahead for this call covers that much of it.
    tokens -= this.takeReserved(k, period, tokens);
    if (tokens <= 0) return;
    // Counted as charged: a charge the store refuses now is queued and written later.
    this.events?.emit({ type: 'tokens', tenantId: k.tenantId, agent: k.agent, tokens });
    try {
      await this.store.charge(k, period, tokens);
    } catch (err) {
      if (this.refused(err)) return this.reject({ key: k, period, tokens }, err);
      this.counters.queuedCharges++;
      this.enqueue(k, period, tokens);
      this.logger.warn(
        `could not charge ${tokens} tokens to ${k.tenantId}/${k.agent}, queued for retry (${this.pendingCharges.size} waiting): ${String(err)}`,
      );
      this.flusher.arm();
    }
  }

  /** Try the queued charges now, oldest first. Rejects if the store still fails (they stay queued). */
  flushCharges(): Promise<void> {
    return this.flusher.flush();
  }

  /** Stop retrying on a timer and flush the queue, `closeAttempts` times at most; what is left is counted as dropped and logged. */
  async close(): Promise<void> {
    await this.flusher.close().catch(() => undefined); // what is left was dropped, counted and logged (dropPending)
  }

  metrics(): TokenQuotaMetrics {
    let pendingTokens = 0;
    for (const c of this.pendingCharges.values()) pendingTokens += c.tokens;
    return { pendingCharges: this.pendingCharges.size, pendingTokens, ...this.counters };
  }

  private async drain(): Promise<void> {
    for (const [id, c] of [...this.pendingCharges]) {
      try {
        await this.store.charge(c.key, c.period, c.tokens);
      } catch (err) {
        if (this.refused(err)) {
          // It can never be written: set aside, and the charges behind it go on.
          this.pendingCharges.delete(id);
          this.reject(c, err);
          continue;
        }
        throw err; // kept; the flusher backs off and tries again
      }
      this.pendingCharges.delete(id);
      this.counters.retriedCharges++;
    }
  }

  private reserve(k: QuotaKey, period: string, tokens: number): void {
    for (const [id, r] of this.reservations) if (r.period !== period) this.reservations.delete(id); // a past period's: never charged now
    const id = JSON.stringify([k.tenantId, k.agent, k.userId ?? '', period]);
    this.reservations.set(id, { period, tokens: (this.reservations.get(id)?.tokens ?? 0) + tokens });
  }

  /** Take up to `tokens` of what was reserved for the key in this period; returns how many. */
  private takeReserved(k: QuotaKey, period: string, tokens: number): number {
    const id = JSON.stringify([k.tenantId, k.agent, k.userId ?? '', period]);
    const held = this.reservations.get(id);
    if (!held) return 0;
    const taken = Math.min(held.tokens, tokens);
    if (held.tokens - taken > 0) held.tokens -= taken;
    else this.reservations.delete(id);
    return taken;
  }

  /** Whether the store says that `err` of a charge means the charge itself is invalid. */
  private refused(err: unknown): boolean {
    try {
      return this.store.refusesCharge?.(err) === true;
    } catch {
      return false;
    }
  }

  private reject(c: PendingCharge, err: unknown): void {
    this.counters.rejectedCharges++;
    this.counters.rejectedTokens += c.tokens;
    this.logger.error(
      `the token quota store refused a charge of ${c.tokens} tokens to ${JSON.stringify(c.key.tenantId)}/${JSON.stringify(c.key.agent)} ` +
        `as invalid; set aside, not retried (${this.counters.rejectedCharges} in all): ${String(err)}`,
    );
  }

  private enqueue(key: QuotaKey, period: string, tokens: number): void {
    const id = JSON.stringify([key.tenantId, key.agent, key.userId ?? '', period]);
    const existing = this.pendingCharges.get(id);
    if (existing && !this.flusher.flushing) {
      existing.tokens += tokens;
      return;
    }
    // While a retry is under way, entries are not changed under it: this one stands apart.
    this.pendingCharges.set(this.flusher.flushing ? `${id}#${++this.seq}` : id, { key, period, tokens });
    while (this.pendingCharges.size > this.maxPending) {
      const [oldest, c] = this.pendingCharges.entries().next().value as [string, PendingCharge];
      this.pendingCharges.delete(oldest);
      this.counters.droppedCharges++;
      this.counters.droppedTokens += c.tokens;
      this.logger.error(
        `token charge queue full: dropped the oldest (${c.tokens} tokens to ${c.key.tenantId}/${c.key.agent}; ${this.counters.droppedCharges} dropped in all)`,
      );
    }
  }

  private pendingTokens(key: QuotaKey, period: string): number {
    let n = 0;
    for (const c of this.pendingCharges.values())
      if (
        c.period === period &&
        c.key.tenantId === key.tenantId &&
        c.key.agent === key.agent &&
        (!key.userId || c.key.userId === key.userId)
      )
        n += c.tokens;
    return n;
  }
}

function normalize(key: QuotaKey): QuotaKey {
  const userId = typeof key.userId === 'string' && key.userId !== '' ? key.userId : undefined;
  return { tenantId: key.tenantId ?? '', agent: key.agent ?? '', ...(userId ? { userId } : {}) };
}

function assertLimit(limit: number): void {
  if (!(typeof limit === 'number' && limit >= 0)) throw new RangeError(`a token limit must be a number >= 0 (got ${String(limit)})`);
}

function assertShare(share: UserShare): void {
  if (share.userShare !== undefined && !(typeof share.userShare === 'number' && share.userShare > 0 && share.userShare <= 1))
    throw new RangeError(`userShare must be a fraction > 0 and <= 1 of the tenant's limit (got ${String(share.userShare)})`);
  if (share.userLimit !== undefined) assertLimit(share.userLimit);
}
