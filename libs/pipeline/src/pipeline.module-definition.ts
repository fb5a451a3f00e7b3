import { ConfigurableModuleBuilder } from '@nestjs/common';
import { PipelineModuleOptions } from './pipeline.options';

export const {
  ConfigurableModuleClass: ConfigurablePipelineModule,
  MODULE_OPTIONS_TOKEN: PIPELINE_MODULE_OPTIONS,
  ASYNC_OPTIONS_TYPE: PIPELINE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PipelineModuleOptions>({ moduleName: 'ZmoduPipeline' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What `PipelineModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`. */
export type PipelineModuleAsyncOptions = typeof PIPELINE_ASYNC_OPTIONS_TYPE;
