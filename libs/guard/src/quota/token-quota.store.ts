/**
 * Whose tokens: one counter per tenant and agent ('' where there is none) and, when `userId` is
 * set, one more per user of that tenant (fair use: a user's share of the tenant's budget).
 */
export interface QuotaKey {
  readonly tenantId: string;
  readonly agent: string;
  /** The user spending; unset, null or '' charges the tenant counter only. */
  readonly userId?: string | null;
}

/** Port: persistent token counters. `charge` is atomic in the store (no read-then-write in the caller). */
export interface TokenQuotaStore {
  /** Tokens used in `period`: the user's counter when `key.userId` is set, else the tenant's (0 when never charged). */
  used(key: QuotaKey, period: string): Promise<number>;
  /**
   * Add `tokens` to the tenant counter of `key` in `period` and, when `key.userId` is set, to that
   * user's counter too, both or neither (one statement or transaction). Returns the tenant's new total.
   */
  charge(key: QuotaKey, period: string, tokens: number): Promise<number>;
  /**
   * Whether `err`, thrown by `charge`, says that the charge itself is invalid (a value the store can never hold, e.g. a
   * NUL in a tenant id), rather than that the write failed (a lock timeout, a trigger, an outage). Only such a charge is
   * set aside by TokenQuota (counted in `rejectedCharges`); any other failure keeps it queued and retried. Without it,
   * every failed charge is queued. TypeOrmTokenQuotaStore answers with `isRowRefused` (the SQLSTATE class).
   */
  refusesCharge?(err: unknown): boolean;
  /**
   * Optional: add `tokens` to the counters of `key` in `period` (as `charge` does) only if the tenant counter is below
   * `limits.tenant` and, when `key.userId` is set, the user's is below `limits.user`: the read and the add are one atomic
   * step (the counters' rows locked), so callers at once never all pass a budget that has room for one. Answers whether
   * it added, and the counters as it left them. TokenQuota.check reserves a call's cost with it; without it, check reads
   * and the charge comes after the call.
   */
  admit?(key: QuotaKey, period: string, tokens: number, limits: QuotaAdmitLimits): Promise<QuotaAdmission>;
  /**
   * Optional: the counters of one tenant (never every tenant: there is no wildcard), newest period first, then by
   * agent, each with its users' counters (most tokens first). An admin reads it (GET /admin/quota).
   */
  usage?(tenantId: string, filter?: QuotaUsageFilter): Promise<QuotaUsageRow[]>;
}

/** The budgets `TokenQuotaStore.admit` checks: a counter at or above its limit admits nothing (Infinity: no limit). */
export interface QuotaAdmitLimits {
  readonly tenant: number;
  readonly user: number;
}

/**
 * What `TokenQuotaStore.admit` did: added or not, and the tenant's counter and (with a user, when it was read) the
 * user's counter as it left them.
 */
export interface QuotaAdmission {
  readonly admitted: boolean;
  readonly tenant: number;
  readonly user: number | null;
}

/** Which counters `TokenQuotaStore.usage` lists (all of the tenant's when empty). */
export interface QuotaUsageFilter {
  readonly agent?: string;
  /** A period's name: '2026-11-30' (day), '2026-11' (month) or 'total'. */
  readonly period?: string;
  /** Rows at most (default QUOTA_USAGE_DEFAULT_LIMIT, at most QUOTA_USAGE_MAX_LIMIT). */
  readonly limit?: number;
}

/** One tenant counter (tenant, agent, period) and the users' counters of it. */
export interface QuotaUsageRow {
  readonly tenantId: string;
  readonly agent: string;
  readonly period: string;
  readonly tokens: number;
  readonly users: ReadonlyArray<{ readonly userId: string; readonly tokens: number }>;
}

/**
 * The most tokens one charge, and one counter, holds (2^53 - 1, exact as a number): a larger count (a hostile model
 * server's `usage`) is charged as this much, and a counter saturates here rather than overflow its column.
 */
export const MAX_CHARGE_TOKENS = Number.MAX_SAFE_INTEGER;

export const QUOTA_USAGE_DEFAULT_LIMIT = 100;
export const QUOTA_USAGE_MAX_LIMIT = 1000;

/** The row limit of a usage query: the default when unset, clamped to 1..QUOTA_USAGE_MAX_LIMIT. */
export function quotaUsageLimit(filter: QuotaUsageFilter | undefined): number {
  const limit = filter?.limit;
  if (limit === undefined || !Number.isFinite(limit)) return QUOTA_USAGE_DEFAULT_LIMIT;
  return Math.min(QUOTA_USAGE_MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** Newest period first, then by agent (the order of `usage`). */
export function compareUsageRows(a: Pick<QuotaUsageRow, 'agent' | 'period'>, b: Pick<QuotaUsageRow, 'agent' | 'period'>): number {
  if (a.period !== b.period) return a.period < b.period ? 1 : -1;
  return a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0;
}
