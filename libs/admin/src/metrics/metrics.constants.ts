/** Internal: MetricsModule's options with their defaults, merged once. */
export const METRICS_OPTIONS = Symbol('zmodu:METRICS_OPTIONS');
