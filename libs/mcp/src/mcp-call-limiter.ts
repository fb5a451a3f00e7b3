/** At most `limit` MCP calls per caller in each window of `windowMs`. */
export interface McpRateLimit {
  readonly limit: number;
  readonly windowMs: number;
}

export const DEFAULT_MCP_RATE_LIMIT: McpRateLimit = Object.freeze({ limit: 600, windowMs: 60_000 });
/** The longest window accepted: one day. */
const MAX_WINDOW_MS = 24 * 60 * 60_000;
/** Windows kept before the ended ones are dropped. */
const SWEEP_AT = 10_000;

/**
 * The calls of each caller in fixed windows (the window starts at its first call), counted one by one: every JSON-RPC
 * request of a batch spends one, so a batch of 100 tools/call is 100 calls, not one HTTP request. Shared by every
 * session of the caller (a caller does not get a budget per session it opens). In memory, per process.
 */
export class McpCallLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(readonly rate: McpRateLimit) {}

  /** Spend one call of `key`: 0 when it may run, else the ms until its window ends. */
  take(key: string, now = Date.now()): number {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.rate.windowMs) {
      if (!window && this.windows.size >= SWEEP_AT) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count >= this.rate.limit) return Math.max(1, window.start + this.rate.windowMs - now);
    window.count++;
    return 0;
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= this.rate.windowMs) this.windows.delete(key);
  }
}

/** The rate limit option, checked: `false` (no limit), or whole positive numbers (a window of at most a day). */
export function rateLimitProblem(value: unknown): string | null {
  if (value === false) return null;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be { limit, windowMs } or false';
  const { limit, windowMs } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1)
    return `limit must be a whole number of calls of at least 1 (got ${String(limit)})`;
  if (!Number.isSafeInteger(windowMs) || (windowMs as number) < 1 || (windowMs as number) > MAX_WINDOW_MS)
    return `windowMs must be a whole number of ms from 1 to ${MAX_WINDOW_MS} (got ${String(windowMs)})`;
  const extra = Object.keys(value).filter((k) => k !== 'limit' && k !== 'windowMs');
  return extra.length ? `has unknown keys ${extra.map((k) => `'${k}'`).join(', ')}: it takes { limit, windowMs }` : null;
}
