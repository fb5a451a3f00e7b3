import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { TypeOrmAgentJobStore } from '../jobs/typeorm-agent-job.store';
import { agentJobStoreContract, agentRunStoreContract } from '../testing';
import { ZMODU_AGENT_MIGRATIONS } from './agent-run.migration';
import { TypeOrmAgentRunStore } from './typeorm-agent-run.store';

describe('TypeOrmAgentRunStore and TypeOrmAgentJobStore', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource(await db.options({ migrations: ZMODU_AGENT_MIGRATIONS }));
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  agentRunStoreContract(`TypeOrmAgentRunStore on ${process.env.ZMODU_TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'} (contract)`, async () => {
    await dataSource.query('TRUNCATE zmodu_agent_runs');
    return { store: new TypeOrmAgentRunStore(dataSource) };
  });

  agentJobStoreContract(`TypeOrmAgentJobStore on ${process.env.ZMODU_TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'} (contract)`, async () => {
    await dataSource.query('TRUNCATE zmodu_agent_jobs, zmodu_agent_job_ticks');
    return { store: new TypeOrmAgentJobStore(dataSource) };
  });
});
