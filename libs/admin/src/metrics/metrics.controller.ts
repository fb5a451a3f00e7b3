import { Controller, Get, Header, Inject, Req, Type, UseGuards } from '@nestjs/common';
import { METRICS_VIEW } from './metrics.constants';
import { MetricsAuthorizeGuard } from './metrics-authorize.guard';
import { MetricsView, ZmoduMetrics } from './zmodu-metrics';

/** The Prometheus text format (version 0.0.4), what prom-client's Registry writes. */
const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * A controller serving `GET <path>`: made per MetricsModule.forRoot, so that the route and the application's own
 * decorators (e.g. `@Public()`) apply to this module's controller only.
 */
export function metricsController(path: string, decorators: readonly ClassDecorator[]): Type<unknown> {
  @Controller()
  @UseGuards(MetricsAuthorizeGuard)
  class MetricsController {
    constructor(@Inject(ZmoduMetrics) private readonly metrics: ZmoduMetrics) {}

    @Get(path)
    @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
    @Header('Cache-Control', 'no-store')
    scrape(@Req() request: Record<PropertyKey, unknown>): Promise<string> {
      // What MetricsAuthorizeGuard let this scrape see: every series, or one tenant's (nothing set: fail closed).
      const view = request[METRICS_VIEW] as MetricsView | undefined;
      return view === undefined ? Promise.resolve('\n') : this.metrics.scrape(view);
    }
  }
  for (const decorate of decorators) decorate(MetricsController);
  return MetricsController;
}
