import { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AgentModuleOptions } from '../agent-module.options';
import { AGENT_MODULE_OPTIONS } from '../agent.module-definition';
import { JOBS_MISSING_DATA_SOURCE_MESSAGE } from '../agent.messages';
import { InvalidJobsOptionsException } from '../exceptions/invalid-jobs-options.exception';
import { AgentJobStore } from './agent-job.ports';
import { InMemoryAgentJobStore } from './in-memory-agent-job.store';
import { resolveJobsOptions } from './resolve-jobs-options';
import { TypeOrmAgentJobStore } from './typeorm-agent-job.store';

/** The AgentJobStore of the scheduled jobs (null when AgentModule has no `jobs` option). */
export const AGENT_JOB_STORE = Symbol('ZMODU_AGENT_JOB_STORE');

/** The job store, picked like the worker's run store: 'typeorm' (the app's DataSource), 'memory', or yours. */
export const agentJobStoreProvider: Provider = {
  provide: AGENT_JOB_STORE,
  inject: [AGENT_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
  useFactory: (raw: AgentModuleOptions, dataSource?: DataSource): AgentJobStore | null => {
    const options = resolveJobsOptions(raw);
    if (!options) return null;
    if (options.store === 'memory') return new InMemoryAgentJobStore();
    if (options.store !== 'typeorm') return options.store;
    if (!dataSource) throw new InvalidJobsOptionsException('jobs.store', JOBS_MISSING_DATA_SOURCE_MESSAGE);
    return new TypeOrmAgentJobStore(dataSource);
  },
};
