import { DynamicModule, Module } from '@nestjs/common';
import { METRICS_OPTIONS } from './metrics.constants';
import { ConfigurableMetricsModule, METRICS_MODULE_OPTIONS, MetricsModuleForRootOptions } from './metrics.module-definition';
import { MetricsModuleOptions, resolveMetricsOptions } from './metrics.options';
import { MetricsAuthorizeGuard } from './metrics-authorize.guard';
import { ZmoduMetrics } from './zmodu-metrics';

/**
 * Prometheus metrics of the runtime at `GET /metrics` (the `path` extra; false for none), in a registry per
 * application: tool calls, denials, tokens, run durations, proposal verdicts, and the outbox backlog read at scrape
 * time. Needs GuardModule (global by default; AgentModule imports it); reads SkillRegistry and the outbox store when
 * they are there. `forRoot(options)` or `forRootAsync({ useFactory, inject, path?, decorators? })`; `ZmoduMetrics`
 * is exported (its `registry` takes your own metrics too).
 */
@Module({
  providers: [
    { provide: METRICS_OPTIONS, inject: [METRICS_MODULE_OPTIONS], useFactory: (raw: MetricsModuleOptions) => resolveMetricsOptions(raw) },
    ZmoduMetrics,
    MetricsAuthorizeGuard,
  ],
  exports: [ZmoduMetrics],
})
export class MetricsModule extends ConfigurableMetricsModule {
  /** The options may be left out: every one has a default. */
  static override forRoot(options: MetricsModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
