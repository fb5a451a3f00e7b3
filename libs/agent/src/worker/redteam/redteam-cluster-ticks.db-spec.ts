import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import type { PostGoalOptions } from '../agent-worker';
import { ZMODU_AGENT_MIGRATIONS } from '../agent-run.migration';
import { AgentJobScheduler } from '../../jobs/agent-job-scheduler';
import { TypeOrmAgentJobStore } from '../../jobs/typeorm-agent-job.store';

describe('red team cluster: a tick claimed by an instance that died before posting', () => {
  let db: TestDatabase;
  let ds: DataSource;
  beforeAll(async () => {
    db = await createTestDatabase();
    ds = new DataSource(await db.options({ migrations: ZMODU_AGENT_MIGRATIONS }));
    await ds.initialize();
    await ds.runMigrations();
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('RT-C2 is run by another instance: the claim alone must not eat the tick', async () => {
    const store = new TypeOrmAgentJobStore(ds);
    await store.upsert({
      id: 'job-orphan',
      tenantId: 't1',
      userId: 'ops',
      permissions: [],
      agent: null,
      goal: 'minutely report',
      cron: '* * * * *',
      timeZone: 'UTC',
      missed: 'catch_up',
      origin: 'static',
    });
    await ds.query(`UPDATE zmodu_agent_jobs SET created_at = now() - interval '10 minutes' WHERE id = 'job-orphan'`);
    const tick = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    // Instance A claimed the tick a minute ago, then was killed before its post stored the run.
    expect(await store.claimTick('job-orphan', tick)).toBe(true);
    await ds.query(`UPDATE zmodu_agent_job_ticks SET claimed_at = claimed_at - interval '1 minute' WHERE job_id = 'job-orphan'`);
    // Instance B starts (or was running and fires later): nobody ever runs the tick.
    const posts: PostGoalOptions[] = [];
    const b = new AgentJobScheduler(store, { post: async (_goal, scope) => (posts.push(scope), { runId: `r${posts.length}` }) });
    await b.start();
    b.stop();
    expect(posts.map((p) => p.jobTick)).toEqual([tick.toISOString()]);
    // Posted once: a second instance starting now finds the tick claimed again just now.
    const c = new AgentJobScheduler(store, { post: async (_goal, scope) => (posts.push(scope), { runId: `r${posts.length}` }) });
    await c.start();
    c.stop();
    expect(posts).toHaveLength(1);
  });
});
