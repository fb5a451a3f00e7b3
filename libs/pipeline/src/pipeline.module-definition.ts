import { ConfigurableModuleBuilder } from '@nestjs/common';
import { PipelineModuleOptions } from './pipeline.options';

export const { ConfigurableModuleClass: ConfigurablePipelineModule, MODULE_OPTIONS_TOKEN: PIPELINE_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<PipelineModuleOptions>({ moduleName: 'ZmoduPipeline' })
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
