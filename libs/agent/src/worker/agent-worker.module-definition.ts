import { ConfigurableModuleBuilder } from '@nestjs/common';
import { AgentWorkerOptions } from './agent-worker.options';

export const {
  ConfigurableModuleClass: ConfigurableAgentWorkerModule,
  MODULE_OPTIONS_TOKEN: AGENT_WORKER_MODULE_OPTIONS,
  OPTIONS_TYPE: AGENT_WORKER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: AGENT_WORKER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<AgentWorkerOptions>({ moduleName: 'ZmoduAgentWorker' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** `AgentWorkerModule.forRootAsync(...)`'s options. */
export type AgentWorkerModuleAsyncOptions = typeof AGENT_WORKER_ASYNC_OPTIONS_TYPE;
