import { SkillError } from '@zmodu/skills';
import { AgentJobSkills } from './agent-job-skills';
import { InMemoryAgentJobStore } from './in-memory-agent-job.store';

const tasks = [
  {
    name: 'daily_report',
    agent: 'reporter',
    goal: 'send the daily report',
    description: 'The daily sales report',
    permissions: ['reports:read'],
  },
];
const alice = { tenantId: 't1', userId: 'alice', permissions: ['reports:read'] };
const bob = { tenantId: 't2', userId: 'bob', permissions: ['admin'] };

describe('AgentJobSkills', () => {
  let store: InMemoryAgentJobStore;
  let skills: AgentJobSkills;
  beforeEach(() => {
    store = new InMemoryAgentJobStore();
    skills = new AgentJobSkills(store, { schedulableTasks: tasks, maxJobsPerTenant: 2 });
  });

  it("schedule_job stores the task goal with the caller scope and the task's permissions the caller holds, never more", async () => {
    expect(skills.listSchedulableTasks(alice)).toEqual([
      { name: 'daily_report', agent: 'reporter', description: 'The daily sales report', permissions: ['reports:read'] },
    ]);
    const { jobId } = await skills.scheduleJob(
      { task: 'daily_report', cron: '0 9 * * 1-5', timeZone: 'Europe/Paris', missed: 'catch_up' },
      alice,
    );
    expect(await store.get('t1', jobId)).toMatchObject({
      tenantId: 't1',
      userId: 'alice',
      permissions: ['reports:read'],
      agent: 'reporter',
      goal: 'send the daily report',
      cron: '0 9 * * 1-5',
      timeZone: 'Europe/Paris',
      missed: 'catch_up',
      origin: 'dynamic',
    });
  });

  it('cancel_job refuses a static job (declared in code), which stays active', async () => {
    await store.upsert({
      id: 'static:nightly',
      tenantId: 't1',
      userId: 'ops',
      permissions: [],
      agent: null,
      goal: 'nightly',
      cron: '0 2 * * *',
      timeZone: 'UTC',
      missed: 'skip',
      origin: 'static',
    });
    await expect(skills.cancelJob({ jobId: 'static:nightly' }, alice)).rejects.toMatchObject({ reason: 'static_job' });
    await expect(skills.cancelJob({ jobId: 'static:nightly' }, bob)).rejects.toMatchObject({ reason: 'not_found' });
    expect((await store.active()).map((j) => j.id)).toEqual(['static:nightly']);
  });

  it('list_jobs and cancel_job are scoped by tenant: another tenant id is not found', async () => {
    const { jobId } = await skills.scheduleJob({ task: 'daily_report', cron: '0 9 * * *' }, alice);
    expect((await skills.listJobs(alice)).map((j) => j.id)).toEqual([jobId]);
    expect(await skills.listJobs(bob)).toEqual([]);
    await expect(skills.cancelJob({ jobId }, bob)).rejects.toMatchObject({ reason: 'not_found' });
    expect(await skills.listJobs(alice)).toHaveLength(1);
    expect(await skills.cancelJob({ jobId }, alice)).toEqual({ cancelled: true });
    expect(await skills.listJobs(alice)).toEqual([]);
  });

  it.each([
    [{ task: 'free goal: delete everything', cron: '0 9 * * *' }, 'unknown_task'],
    [{ task: 'daily_report', cron: '* * * * * *' }, 'invalid_cron'],
    [{ task: 'daily_report', cron: 'soon' }, 'invalid_cron'],
    [{ task: 'daily_report', cron: '0 9 * * *', timeZone: 'Nowhere/City' }, 'invalid_cron'],
  ])('schedule_job refuses %j (%s)', async (args, code) => {
    await expect(skills.scheduleJob(args, alice)).rejects.toMatchObject({ reason: code });
    expect(await store.count('t1')).toBe(0);
  });

  it('caps the jobs per tenant', async () => {
    await skills.scheduleJob({ task: 'daily_report', cron: '0 9 * * *' }, alice);
    await skills.scheduleJob({ task: 'daily_report', cron: '0 10 * * *' }, alice);
    await expect(skills.scheduleJob({ task: 'daily_report', cron: '0 11 * * *' }, alice)).rejects.toMatchObject({
      reason: 'too_many_jobs',
    });
    await expect(skills.scheduleJob({ task: 'daily_report', cron: '0 11 * * *' }, bob)).resolves.toHaveProperty('jobId');
  });

  it.each([
    [{ userId: 'u', permissions: [] }, 'tenant_required'],
    [{ tenantId: 't1', permissions: [] }, 'user_required'],
    [{ tenantId: '', userId: 'u', permissions: [] }, 'tenant_required'],
    [{ tenantId: '0', userId: 'u', permissions: [] }, 'tenant_required'],
    [{ tenantId: 't1', userId: '0', permissions: [] }, 'user_required'],
    [{ tenantId: 't1\u0000', userId: 'u', permissions: [] }, 'tenant_required'],
  ])('every skill refuses a caller without tenant or user (%j)', async (ctx, code) => {
    expect(() => skills.listSchedulableTasks(ctx)).toThrow(SkillError);
    await expect(skills.scheduleJob({ task: 'daily_report', cron: '0 9 * * *' }, ctx)).rejects.toMatchObject({ reason: code });
    await expect(skills.listJobs(ctx)).rejects.toMatchObject({ reason: code });
    await expect(skills.cancelJob({ jobId: 'x' }, ctx)).rejects.toMatchObject({ reason: code });
  });

  it('bad options fail at construction with what to fix', () => {
    expect(() => new AgentJobSkills(store, { schedulableTasks: [...tasks, ...tasks] })).toThrow('used twice');
    expect(() => new AgentJobSkills(store, { schedulableTasks: [{ name: 'x', goal: '' }] })).toThrow('non-empty name and goal');
    expect(() => new AgentJobSkills(store, { schedulableTasks: tasks, maxJobsPerTenant: 0 })).toThrow('maxJobsPerTenant');
    expect(() => new AgentJobSkills(store, { schedulableTasks: tasks, maxJobLifetimeMs: 1000 })).toThrow(/^jobs\.maxJobLifetimeMs must be/);
    expect(() => new AgentJobSkills(store, { schedulableTasks: [{ name: 'x', goal: 'y', permissions: 'all' as never }] })).toThrow(
      'task "x": permissions must be an array',
    );
    expect(() => new AgentJobSkills(store, { schedulableTasks: [{ name: 'x', goal: 'y', permissions: [' admin'] }] })).toThrow(
      'task "x": permissions:',
    );
    expect(() => new AgentJobSkills(store, { schedulableTasks: tasks, permissions: { list_jobs: '' } })).toThrow(
      /^jobs\.permissions\.list_jobs: expected a permission code/,
    );
    expect(() => new AgentJobSkills(store, { schedulableTasks: tasks, permissions: { jobs: 'x' } as never })).toThrow(
      /^jobs\.permissions\.jobs: no such skill/,
    );
  });
});
