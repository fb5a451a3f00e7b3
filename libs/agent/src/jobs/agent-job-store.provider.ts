import { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { resolveStoreChoice } from '@zmodu/core';
import { AgentJobStore } from './agent-job.ports';
import { AGENT_JOBS_MODULE_OPTIONS } from './agent-jobs.module-definition';
import { AgentJobsOptions } from './agent-jobs.options';
import { JOB_STORE_CHOICE, resolveJobsOptions } from './resolve-jobs-options';
import { TypeOrmAgentJobStore } from './typeorm-agent-job.store';

/** The AgentJobStore of the scheduled jobs (AgentJobsModule). */
export const AGENT_JOB_STORE = Symbol('ZMODU_AGENT_JOB_STORE');

/** The job store, picked like the worker's run store: 'typeorm' (the app's DataSource), 'memory', or yours. */
export const agentJobStoreProvider: Provider = {
  provide: AGENT_JOB_STORE,
  inject: [AGENT_JOBS_MODULE_OPTIONS, { token: getDataSourceToken(), optional: true }],
  useFactory: (raw: AgentJobsOptions, dataSource?: DataSource): AgentJobStore => {
    const options = resolveJobsOptions(raw);
    return resolveStoreChoice<AgentJobStore, DataSource>({
      ...JOB_STORE_CHOICE,
      choice: options.store,
      dataSource,
      typeorm: (ds) => new TypeOrmAgentJobStore(ds),
    });
  },
};
