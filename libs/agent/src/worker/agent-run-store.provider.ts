import { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { resolveStoreChoice } from '@zmodu/core';
import { AGENT_RUN_STORE } from './agent-worker.constants';
import { AGENT_WORKER_MODULE_OPTIONS } from './agent-worker.module-definition';
import { AgentWorkerOptions } from './agent-worker.options';
import { resolveWorkerOptions, RUN_STORE_CHOICE } from './resolve-worker-options';
import { TypeOrmAgentRunStore } from './typeorm-agent-run.store';
import { AgentRunStore } from './worker.ports';

/** The worker's run store, picked like GuardModule's stores: 'typeorm' (the app's DataSource), 'memory', or yours. */
export const agentRunStoreProvider: Provider = {
  provide: AGENT_RUN_STORE,
  inject: [AGENT_WORKER_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
  useFactory: (raw: AgentWorkerOptions, dataSource?: DataSource): AgentRunStore => {
    const options = resolveWorkerOptions(raw);
    return resolveStoreChoice<AgentRunStore, DataSource>({
      ...RUN_STORE_CHOICE,
      choice: options.runStore,
      dataSource,
      typeorm: (ds) => new TypeOrmAgentRunStore(ds),
    });
  },
};
