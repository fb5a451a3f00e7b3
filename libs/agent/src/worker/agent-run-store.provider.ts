import { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { WORKER_MISSING_DATA_SOURCE_MESSAGE } from '../agent.messages';
import { InvalidWorkerOptionsException } from '../exceptions/invalid-worker-options.exception';
import { AGENT_RUN_STORE } from './agent-worker.constants';
import { AGENT_WORKER_MODULE_OPTIONS } from './agent-worker.module-definition';
import { AgentWorkerOptions } from './agent-worker.options';
import { InMemoryAgentRunStore } from './in-memory-agent-run.store';
import { resolveWorkerOptions } from './resolve-worker-options';
import { TypeOrmAgentRunStore } from './typeorm-agent-run.store';
import { AgentRunStore } from './worker.ports';

/** The worker's run store, picked like GuardModule's stores: 'typeorm' (the app's DataSource), 'memory', or yours. */
export const agentRunStoreProvider: Provider = {
  provide: AGENT_RUN_STORE,
  inject: [AGENT_WORKER_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
  useFactory: (raw: AgentWorkerOptions, dataSource?: DataSource): AgentRunStore => {
    const options = resolveWorkerOptions(raw);
    if (options.runStore === 'memory') return new InMemoryAgentRunStore();
    if (options.runStore !== 'typeorm') return options.runStore;
    if (!dataSource) throw new InvalidWorkerOptionsException('worker.runStore', WORKER_MISSING_DATA_SOURCE_MESSAGE);
    return new TypeOrmAgentRunStore(dataSource);
  },
};
