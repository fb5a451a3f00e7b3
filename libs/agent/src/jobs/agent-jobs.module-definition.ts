import { ConfigurableModuleBuilder } from '@nestjs/common';
import { AgentJobsOptions } from './agent-jobs.options';

export const {
  ConfigurableModuleClass: ConfigurableAgentJobsModule,
  MODULE_OPTIONS_TOKEN: AGENT_JOBS_MODULE_OPTIONS,
  ASYNC_OPTIONS_TYPE: AGENT_JOBS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<AgentJobsOptions>({ moduleName: 'ZmoduAgentJobs' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** `AgentJobsModule.forRootAsync(...)`'s options. */
export type AgentJobsModuleAsyncOptions = typeof AGENT_JOBS_ASYNC_OPTIONS_TYPE;
