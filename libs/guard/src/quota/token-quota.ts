import { Logger } from '@nestjs/common';
import { QuotaKey, TokenQuotaStore } from './token-quota.store';

export type QuotaPeriod = 'day' | 'month' | 'total';

export interface TokenQuotaOptions {
  /** Token limit per tenant and agent for one period, unless an agent sets its own. Unset: unlimited. */
  readonly defaultLimit?: number;
  /** The window a limit applies to (UTC). Default 'day'. */
  readonly period?: QuotaPeriod;
}

export interface QuotaStatus {
  readonly allowed: boolean;
  readonly used: number;
  /** Infinity when no limit applies. */
  readonly limit: number;
  readonly remaining: number;
  readonly period: string;
}

/**
 * Token quota per tenant and per agent, kept in a store (PostgreSQL by default) so that it
 * survives a restart. Checked before a call, charged after it.
 */
export class TokenQuota {
  private readonly logger = new Logger('TokenQuota');
  private readonly limits = new Map<string, number>();
  private readonly period: QuotaPeriod;

  constructor(
    private readonly store: TokenQuotaStore,
    private readonly options: TokenQuotaOptions = {},
    private readonly now: () => Date = () => new Date(),
  ) {
    this.period = options.period ?? 'day';
    if (options.defaultLimit !== undefined) assertLimit(options.defaultLimit);
  }

  /** Set the per-period limit of one agent (every tenant gets this much); undefined removes it. */
  setAgentLimit(agent: string, limit: number | undefined): void {
    if (limit === undefined) this.limits.delete(agent);
    else {
      assertLimit(limit);
      this.limits.set(agent, limit);
    }
  }

  limitFor(key: QuotaKey): number {
    return this.limits.get(key.agent) ?? this.options.defaultLimit ?? Number.POSITIVE_INFINITY;
  }

  /** The current period's name: '2026-11-30' for 'day', '2026-11' for 'month', 'total'. */
  currentPeriod(): string {
    const iso = this.now().toISOString();
    if (this.period === 'day') return iso.slice(0, 10);
    if (this.period === 'month') return iso.slice(0, 7);
    return 'total';
  }

  /** Whether `key` may spend more tokens now. No store read when no limit applies. */
  async check(key: QuotaKey): Promise<QuotaStatus> {
    const limit = this.limitFor(key);
    const period = this.currentPeriod();
    if (limit === Number.POSITIVE_INFINITY) return { allowed: true, used: 0, limit, remaining: limit, period };
    const used = await this.store.used(normalize(key), period);
    return { allowed: used < limit, used, limit, remaining: Math.max(0, limit - used), period };
  }

  /** Charge tokens after a call. Returns the new total for the period. */
  async charge(key: QuotaKey, tokens: number): Promise<number> {
    if (!(tokens >= 0) || !Number.isFinite(tokens)) throw new RangeError(`tokens must be a finite number >= 0 (got ${tokens})`);
    return this.store.charge(normalize(key), this.currentPeriod(), tokens);
  }

  /** Charge, logging instead of throwing (metering must not fail a call that already ran). */
  async chargeQuietly(key: QuotaKey, tokens: number): Promise<void> {
    if (tokens <= 0) return;
    try {
      await this.charge(key, tokens);
    } catch (err) {
      this.logger.error(`could not charge ${tokens} tokens to ${key.tenantId}/${key.agent}: ${String(err)}`);
    }
  }
}

function normalize(key: QuotaKey): QuotaKey {
  return { tenantId: key.tenantId ?? '', agent: key.agent ?? '' };
}

function assertLimit(limit: number): void {
  if (!(typeof limit === 'number' && limit >= 0))
    throw new RangeError(`a token limit must be a number >= 0 (got ${String(limit)})`);
}
