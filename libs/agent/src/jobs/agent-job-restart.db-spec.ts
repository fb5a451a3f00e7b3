import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import type { PostGoalOptions } from '../worker/agent-worker';
import { ZMODU_AGENT_MIGRATIONS } from '../worker/agent-run.migration';
import { AgentJobScheduler } from './agent-job-scheduler';
import { AgentJobSkills } from './agent-job-skills';
import { TypeOrmAgentJobStore } from './typeorm-agent-job.store';

describe('dynamic jobs survive a restart (TypeOrmAgentJobStore on one database)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  const open = async () => {
    const ds = new DataSource(await db.options({ migrations: ZMODU_AGENT_MIGRATIONS }));
    await ds.initialize();
    await ds.runMigrations();
    return ds;
  };

  it('a job scheduled through the skill on the first app is listed, scoped and run (catch_up) by the next app', async () => {
    const tasks = [{ name: 'digest', agent: 'reporter', goal: 'send the digest', permissions: ['digest:send'] }];
    const first = await open();
    const skills1 = new AgentJobSkills(new TypeOrmAgentJobStore(first), { schedulableTasks: tasks });
    const alice = { tenantId: 't1', userId: 'alice', permissions: ['digest:send'] };
    const { jobId } = await skills1.scheduleJob({ task: 'digest', cron: '* * * * *', missed: 'catch_up' }, alice);
    // The app was down for more than a minute (the job is made three minutes older than it is): the next app catches up once.
    await first.query(`UPDATE zmodu_agent_jobs SET created_at = created_at - interval '3 minutes' WHERE id = $1`, [jobId]);
    await first.destroy();

    const second = await open();
    const store2 = new TypeOrmAgentJobStore(second);
    const skills2 = new AgentJobSkills(store2, { schedulableTasks: tasks });
    expect((await skills2.listJobs(alice)).map((j) => j.id)).toEqual([jobId]);
    expect(await skills2.listJobs({ tenantId: 't2', userId: 'bob', permissions: [] })).toEqual([]);
    const posts: { goal: string; scope: PostGoalOptions }[] = [];
    const poster = { post: async (goal: string, scope: PostGoalOptions) => (posts.push({ goal, scope }), { runId: `r${posts.length}` }) };
    const a = new AgentJobScheduler(store2, poster);
    const b = new AgentJobScheduler(store2, poster);
    await Promise.all([a.start(), b.start()]);
    a.stop();
    b.stop();
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({
      goal: 'send the digest',
      scope: { agent: 'reporter', tenantId: 't1', userId: 'alice', permissions: ['digest:send'], jobId },
    });
    const ticks = await second.query('SELECT run_id FROM zmodu_agent_job_ticks WHERE job_id = $1', [jobId]);
    expect(ticks).toEqual([{ run_id: 'r1' }]);
    await second.destroy();
  });
});
