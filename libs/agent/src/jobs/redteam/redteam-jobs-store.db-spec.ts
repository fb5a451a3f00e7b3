import { DataSource } from 'typeorm';
import { openTestDataSource } from '@zmodu/db/testing';
import { SkillError } from '@zmodu/skills';
import { InvalidGoalException } from '../../exceptions/invalid-goal.exception';
import type { PostGoalOptions } from '../../worker/agent-worker';
import { ZMODU_AGENT_MIGRATIONS } from '../../worker/agent-run.migration';
import { AgentJobStore, NewAgentJob } from '../agent-job.ports';
import { nextTick } from '../agent-job-cron';
import { ZmoduAgentJobScope1764630270000, ZmoduAgentJobs1764570000000, ZmoduAgentJobTickClaims1764580000000 } from '../agent-job.migration';
import { AgentJobScheduler } from '../agent-job-scheduler';
import { AgentJobSkills } from '../agent-job-skills';
import { InMemoryAgentJobStore } from '../in-memory-agent-job.store';
import { TypeOrmAgentJobStore } from '../typeorm-agent-job.store';

const job = (over: Partial<NewAgentJob> = {}): NewAgentJob => ({
  id: 'job-1',
  tenantId: 't1',
  userId: 'u1',
  permissions: [],
  agent: null,
  goal: 'minutely report',
  cron: '* * * * *',
  timeZone: 'UTC',
  missed: 'skip',
  origin: 'dynamic',
  ...over,
});

/** Seventeen codes, as an admin's token of the sample holds. */
const ADMIN_PERMISSIONS = Array.from({ length: 17 }, (_, i) => (i === 3 ? 'report:read' : `perm:${i}`));
const admin = { tenantId: 't1', userId: 'root', permissions: ADMIN_PERMISSIONS };
const tasks = [
  { name: 'daily_report', agent: 'reporter', goal: 'send the daily report', permissions: ['report:read', 'report:send'] },
  { name: 'reminder', agent: 'reporter', goal: 'remind the desk' },
];
const DAY = 86_400_000;

describe('red team: job stores (issues 13 and 27)', () => {
  let ds: DataSource;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ ds, close } = await openTestDataSource({ migrations: ZMODU_AGENT_MIGRATIONS }));
    await ds.runMigrations();
  });
  afterAll(() => close?.());
  beforeEach(async () => {
    await ds.query('DELETE FROM zmodu_agent_job_ticks');
    await ds.query('DELETE FROM zmodu_agent_jobs');
  });

  const stores: [string, () => AgentJobStore][] = [
    ['in memory', () => new InMemoryAgentJobStore()],
    ['TypeORM', () => new TypeOrmAgentJobStore(ds)],
  ];

  it.each(stores)("RJ-3 (%s): reads and cancels with tenant '0', blank or a NUL find nothing (scopeIdProblem's rule)", async (_n, make) => {
    const store = make();
    // Stored by a path that did not check (a custom writer, or an @AgentJob before the check): never served.
    for (const tenantId of ['0', ' ', ' 0 ']) await store.upsert(job({ id: `job-${JSON.stringify(tenantId)}`, tenantId }));
    for (const tenantId of ['0', ' ', ' 0 ', 'a\u0000']) {
      expect(await store.list(tenantId)).toEqual([]);
      expect(await store.count(tenantId)).toBe(0);
      expect(await store.get(tenantId, `job-${JSON.stringify(tenantId)}`)).toBeNull();
      expect(await store.cancel(tenantId, `job-${JSON.stringify(tenantId)}`)).toBe(false);
    }
  });

  it('RJ-1 (TypeORM): a tick refused for good is left alone by the reclaim of every instance', async () => {
    const store = new TypeOrmAgentJobStore(ds);
    await store.upsert(job({ agent: 'gone' }));
    let posts = 0;
    const refusing = {
      post: async () => {
        posts++;
        throw new InvalidGoalException("no agent named 'gone' (agents: trader)");
      },
    };
    const tick = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const a = new AgentJobScheduler(store, refusing, 60_000);
    expect(await a.fire((await store.active())[0], tick)).toBe(false);
    expect(posts).toBe(1);
    await ds.query(`UPDATE zmodu_agent_job_ticks SET claimed_at = claimed_at - interval '10 minutes'`);
    expect(await store.reclaimUnposted(1_000, 100)).toEqual([]);
  });

  // Issue 27: the cap under concurrency, what a job keeps, its expiry.

  it.each(stores)(
    'RJ-5 (%s): 60 concurrent schedule_job calls under maxJobsPerTenant 20 leave 20 active jobs (attack: count, then insert)',
    async (_n, make) => {
      const store = make();
      const skills = new AgentJobSkills(store, { schedulableTasks: tasks, maxJobsPerTenant: 20 });
      const calls = await Promise.allSettled(
        Array.from({ length: 60 }, () => skills.scheduleJob({ task: 'daily_report', cron: '0 9 * * *' }, admin)),
      );
      const refused = calls.filter((c): c is PromiseRejectedResult => c.status === 'rejected');
      expect(calls.filter((c) => c.status === 'fulfilled')).toHaveLength(20);
      expect(refused).toHaveLength(40);
      for (const r of refused) expect(r.reason).toMatchObject({ reason: 'too_many_jobs' });
      expect(await store.count('t1')).toBe(20);
      expect(await store.list('t1')).toHaveLength(20);
    },
  );

  it.each(stores)(
    "RJ-6 (%s): an admin's job keeps only what its task declares and the admin holds (attack: a job keeps all 17 permissions of its creator)",
    async (_n, make) => {
      const store = make();
      const skills = new AgentJobSkills(store, { schedulableTasks: tasks });
      const scheduled = await skills.scheduleJob({ task: 'daily_report', cron: '* * * * *' }, admin);
      expect(scheduled.permissions).toEqual(['report:read']); // report:send is the task's, not the admin's
      const job = await store.get('t1', scheduled.jobId);
      expect(job).toMatchObject({ task: 'daily_report', permissions: ['report:read'] });
      // A task that declares nothing runs with nothing (fail closed), whatever its creator holds.
      const bare = await skills.scheduleJob({ task: 'reminder', cron: '0 9 * * *' }, admin);
      expect((await store.get('t1', bare.jobId))?.permissions).toEqual([]);
      // What a tick posts: the job's permissions, not the token's.
      const posted: PostGoalOptions[] = [];
      const scheduler = new AgentJobScheduler(store, { post: async (_goal, scope) => (posted.push(scope), { runId: 'r1' }) }, 60_000);
      expect(await scheduler.fire(job!, new Date(Math.floor(Date.now() / 60_000) * 60_000))).toBe(true);
      expect(posted).toEqual([expect.objectContaining({ tenantId: 't1', userId: 'root', permissions: ['report:read'] })]);
    },
  );

  it.each(stores)(
    'RJ-7 (%s): a job carries an expiry, capped by maxJobLifetimeMs; an expired job fires no more and is reported',
    async (_n, make) => {
      const store = make();
      const skills = new AgentJobSkills(store, { schedulableTasks: tasks, maxJobLifetimeMs: 30 * DAY });
      const lasting = await skills.scheduleJob({ task: 'daily_report', cron: '0 9 * * *' }, admin);
      // maxJobLifetimeMs from when it was scheduled: against the job's own stored creation (written just after its
      // expiry was computed), so at most 30 days, and not a day less.
      const stored = await store.get('t1', lasting.jobId);
      const lifetime = Date.parse(lasting.expiresAt) - stored!.createdAt.getTime();
      expect(lifetime).toBeLessThanOrEqual(30 * DAY);
      expect(lifetime).toBeGreaterThan(29 * DAY);
      const refuse = async (expires: unknown, cron = '* * * * *') => {
        const err = await skills.scheduleJob({ task: 'daily_report', cron, expiresAt: expires as string }, admin).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(SkillError);
        expect(err).toMatchObject({ reason: 'invalid_expiry' });
        return (err as SkillError).message;
      };
      expect(await refuse(new Date(Date.now() + 31 * DAY).toISOString())).toMatch(/more than 30 days away/);
      expect(await refuse(new Date(Date.now() - 1000).toISOString())).toMatch(/not in the future/);
      expect(await refuse('next tuesday')).toMatch(/date and time with a zone/);
      expect(await refuse('2099-01-01T00:00:00')).toMatch(/with a zone/);
      expect(await refuse(new Date(Date.now() + DAY).toISOString(), '0 0 1 1 *')).toMatch(/before its first tick/);
      expect(await store.count('t1')).toBe(1);

      const brief = await skills.scheduleJob(
        { task: 'daily_report', cron: '* * * * *', expiresAt: new Date(Date.now() + 61_000).toISOString() },
        admin,
      );
      const record = (await store.get('t1', brief.jobId))!;
      const posted: string[] = [];
      const scheduler = new AgentJobScheduler(store, { post: async () => (posted.push('x'), { runId: 'r' }) }, 60_000);
      // Its expiry comes: the store refuses its ticks (on every instance), the scheduler does not arm it and says so.
      await store.upsert({ ...record, expiresAt: new Date(Date.now() - 1000) });
      expect(await scheduler.fire(record, new Date(Math.floor(Date.now() / 60_000) * 60_000))).toBe(false);
      expect(posted).toEqual([]);
      await scheduler.start();
      try {
        expect(scheduler.jobIds()).toEqual([lasting.jobId]);
      } finally {
        scheduler.stop();
      }
      // Still live, but its expiry comes at its next tick: not armed, reported once.
      const expiring = new AgentJobScheduler(store, { post: async () => ({ runId: 'r' }) }, 60_000);
      const yearly = '0 0 1 1 *';
      await store.upsert({ ...record, cron: yearly, expiresAt: nextTick(yearly, 'UTC', new Date()) });
      await expiring.start();
      try {
        expect(expiring.expiredJobIds()).toEqual([brief.jobId]);
        expect(expiring.jobIds()).toEqual([lasting.jobId]);
      } finally {
        expiring.stop();
      }
      await store.upsert({ ...record, expiresAt: new Date(Date.now() - 1000) });
      // list_jobs shows it expired (until it is cancelled); it counts no more against the cap.
      const listed = await skills.listJobs(admin);
      expect(listed.find((j) => j.id === brief.jobId)).toMatchObject({ expired: true, task: 'daily_report' });
      expect(listed.find((j) => j.id === lasting.jobId)).toMatchObject({ expired: false, expiresAt: lasting.expiresAt });
      expect(await store.count('t1')).toBe(1);
    },
  );

  it('RJ-8: the migration adding task and expires_at runs on an existing database, twice, and keeps its jobs', async () => {
    const { ds: old, close: closeOld } = await openTestDataSource({});
    try {
      const runner = old.createQueryRunner();
      await new ZmoduAgentJobs1764570000000().up(runner);
      await new ZmoduAgentJobTickClaims1764580000000().up(runner);
      await runner.query(
        `INSERT INTO zmodu_agent_jobs (id, tenant_id, user_id, permissions, agent, goal, cron, time_zone, missed, origin)
         VALUES ('old', 't1', 'root', $1::jsonb, 'reporter', 'send the daily report', '0 9 * * *', 'UTC', 'skip', 'dynamic')`,
        [JSON.stringify(ADMIN_PERMISSIONS)],
      );
      await new ZmoduAgentJobScope1764630270000().up(runner);
      await new ZmoduAgentJobScope1764630270000().up(runner);
      await runner.release();
      const store = new TypeOrmAgentJobStore(old);
      const job = (await store.get('t1', 'old'))!;
      expect(job).toMatchObject({ task: null, expiresAt: null, permissions: ADMIN_PERMISSIONS });
      // What the runner does with it at boot: its task found by goal and agent, its permissions cut, an expiry given.
      const skills = new AgentJobSkills(store, { schedulableTasks: tasks });
      const narrowed = skills.narrowed(job);
      expect(narrowed).toMatchObject({ id: 'old', task: 'daily_report', permissions: ['report:read'] });
      await store.upsert(narrowed!);
      expect(skills.narrowed((await store.get('t1', 'old'))!)).toBeNull();
    } finally {
      await closeOld();
    }
  });
});
