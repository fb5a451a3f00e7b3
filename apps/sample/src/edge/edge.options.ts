/** The HTTP edge of the sample: token rules, body limits, rate limit. Every field has a default. */
export class EdgeOptions {
  /** Longest token lifetime accepted (exp - iat, or exp - now without iat), in seconds. Default 24 h. */
  maxTokenLifetimeSeconds = 24 * 60 * 60;
  /** How far in the future an `iat` may be (clock skew), in seconds. Default 60. */
  clockSkewSeconds = 60;
  /** JSON body limit of POST /agents/:name/runs and the approval decisions, in bytes. Default 8 KB. */
  smallBodyBytes = 8 * 1024;
  /** JSON body limit of every other route, in bytes. Default 64 KB (the parser itself stops at 100 KB). */
  defaultBodyBytes = 64 * 1024;
  /** Deepest nesting of arrays and objects accepted in a JSON body. Default 32. */
  maxBodyDepth = 32;
  /** Requests per caller (tenant and subject of the token) per window. Default 600. */
  rateLimit = 600;
  /** The rate-limit window, in milliseconds. Default 60 000. */
  rateWindowMs = 60_000;
}

export function edgeOptions(partial: Partial<EdgeOptions> = {}): EdgeOptions {
  const merged = Object.assign(new EdgeOptions(), partial);
  for (const [key, value] of Object.entries(merged))
    if (!Number.isInteger(value) || (value as number) < 1)
      throw new Error(`edge.${key} must be a whole number of at least 1 (got ${String(value)}).`);
  return merged;
}

/** Injection token of the merged EdgeOptions of the sample app. */
export const EDGE_OPTIONS = Symbol('sample:EDGE_OPTIONS');
