/** Internal: MetricsModule's options with their defaults, merged once. */
export const METRICS_OPTIONS = Symbol('zmodu:METRICS_OPTIONS');

/** Internal: the request property where MetricsAuthorizeGuard puts what the scrape may see (true, or a tenant's view). */
export const METRICS_VIEW = Symbol('zmodu:METRICS_VIEW');
