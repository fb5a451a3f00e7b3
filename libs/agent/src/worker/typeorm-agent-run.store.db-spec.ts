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
    await dataSource.query('TRUNCATE zmodu_agent_runs, zmodu_agent_run_clock, zmodu_agent_run_journal');
    return { store: new TypeOrmAgentRunStore(dataSource) };
  });

  agentJobStoreContract(`TypeOrmAgentJobStore on ${process.env.ZMODU_TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'} (contract)`, async () => {
    await dataSource.query('TRUNCATE zmodu_agent_jobs, zmodu_agent_job_ticks');
    return { store: new TypeOrmAgentJobStore(dataSource) };
  });

  it('does not claim again an unposted tick whose run is stored (the post landed, only setTickRun was lost)', async () => {
    await dataSource.query('TRUNCATE zmodu_agent_jobs, zmodu_agent_job_ticks, zmodu_agent_runs, zmodu_agent_run_journal');
    const jobs = new TypeOrmAgentJobStore(dataSource);
    const job = {
      tenantId: 't1',
      userId: 'u1',
      permissions: [],
      agent: 'reporter',
      goal: 'digest',
      cron: '0 * * * *',
      timeZone: 'UTC',
      missed: 'skip' as const,
      origin: 'dynamic' as const,
    };
    await jobs.upsert({ ...job, id: 'posted' });
    await jobs.upsert({ ...job, id: 'lost' });
    const tick = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    expect(await jobs.claimTick('posted', tick)).toBe(true);
    expect(await jobs.claimTick('lost', tick)).toBe(true);
    await new TypeOrmAgentRunStore(dataSource).insert([
      {
        id: 'run-posted',
        tenantId: 't1',
        userId: 'u1',
        permissions: [],
        agent: 'reporter',
        goal: 'digest',
        maxAttempts: 3,
        jobId: 'posted',
        jobTick: tick.toISOString(),
      },
    ]);
    await new Promise((r) => setTimeout(r, 20));
    const reclaimed = await jobs.reclaimUnposted(0, 10);
    expect(reclaimed.map((r) => [r.job.id, r.tick.toISOString()])).toEqual([['lost', tick.toISOString()]]);
  });
});
