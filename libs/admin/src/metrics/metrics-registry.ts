/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * prom-client's `Registry` as the declarations of @zmodu/admin name it: its members, with `any` where prom-client's
 * own types would be, so that these declarations need no optional peer (an application without prom-client
 * compiles against them, with `skipLibCheck: false` too). Both ways round it is prom-client's Registry:
 * `ZmoduMetrics.registry` is one, and it goes where prom-client takes a Registry (`registers: [metrics.registry]`).
 */
export interface MetricsRegistry {
  metrics(): Promise<string>;
  clear(): void;
  resetMetrics(): void;
  registerMetric(metric: any): void;
  getMetricsAsJSON(): Promise<any[]>;
  getMetricsAsArray(): any[];
  removeSingleMetric(name: string): void;
  getSingleMetric(name: string): any;
  setDefaultLabels(labels: object): void;
  getSingleMetricAsString(name: string): Promise<string>;
  readonly contentType: any;
  setContentType(contentType: any): void;
}
