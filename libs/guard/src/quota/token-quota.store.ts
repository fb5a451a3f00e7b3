/** Whose tokens: one counter per tenant and agent ('' where there is none). */
export interface QuotaKey {
  readonly tenantId: string;
  readonly agent: string;
}

/** Port: persistent token counters. `charge` is atomic in the store (no read-then-write in the caller). */
export interface TokenQuotaStore {
  /** Tokens used by `key` in `period` (0 when never charged). */
  used(key: QuotaKey, period: string): Promise<number>;
  /** Add `tokens` to `key` in `period` and return the new total. */
  charge(key: QuotaKey, period: string, tokens: number): Promise<number>;
}
