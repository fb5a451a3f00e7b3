import { ConfigurableModuleBuilder } from '@nestjs/common';
import { metricsController } from './metrics.controller';
import { MetricsModuleExtras, MetricsModuleOptions, resolveMetricsPath } from './metrics.options';

const DEFAULT_EXTRAS: MetricsModuleExtras = { path: '/metrics', decorators: [] };

export const {
  ConfigurableModuleClass: ConfigurableMetricsModule,
  MODULE_OPTIONS_TOKEN: METRICS_MODULE_OPTIONS,
  OPTIONS_TYPE: METRICS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: METRICS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<MetricsModuleOptions>({ moduleName: 'ZmoduMetrics' })
  .setClassMethodName('forRoot')
  .setExtras<MetricsModuleExtras>(DEFAULT_EXTRAS, (definition, extras) => {
    const path = resolveMetricsPath(extras.path);
    return { ...definition, controllers: path === false ? [] : [metricsController(path, extras.decorators ?? [])] };
  })
  .build();

/** What `MetricsModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`, and the extras. */
export type MetricsModuleAsyncOptions = typeof METRICS_ASYNC_OPTIONS_TYPE;

/** What `MetricsModule.forRoot` takes: the options and the extras. */
export type MetricsModuleForRootOptions = typeof METRICS_OPTIONS_TYPE;
