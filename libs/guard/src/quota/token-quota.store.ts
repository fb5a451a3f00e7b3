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
}
