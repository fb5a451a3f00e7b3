import { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { JOBS_MISSING_DATA_SOURCE_MESSAGE } from '../agent.messages';
import { InvalidJobsOptionsException } from '../exceptions/invalid-jobs-options.exception';
import { AgentJobStore } from './agent-job.ports';
import { AGENT_JOBS_MODULE_OPTIONS } from './agent-jobs.module-definition';
import { AgentJobsOptions } from './agent-jobs.options';
import { InMemoryAgentJobStore } from './in-memory-agent-job.store';
import { resolveJobsOptions } from './resolve-jobs-options';
import { TypeOrmAgentJobStore } from './typeorm-agent-job.store';

/** The AgentJobStore of the scheduled jobs (AgentJobsModule). */
export const AGENT_JOB_STORE = Symbol('ZMODU_AGENT_JOB_STORE');

/** The job store, picked like the worker's run store: 'typeorm' (the app's DataSource), 'memory', or yours. */
export const agentJobStoreProvider: Provider = {
  provide: AGENT_JOB_STORE,
  inject: [AGENT_JOBS_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
  useFactory: (raw: AgentJobsOptions, dataSource?: DataSource): AgentJobStore => {
    const options = resolveJobsOptions(raw);
    if (options.store === 'memory') return new InMemoryAgentJobStore();
    if (options.store !== 'typeorm') return options.store;
    if (!dataSource) throw new InvalidJobsOptionsException('jobs.store', JOBS_MISSING_DATA_SOURCE_MESSAGE);
    return new TypeOrmAgentJobStore(dataSource);
  },
};
