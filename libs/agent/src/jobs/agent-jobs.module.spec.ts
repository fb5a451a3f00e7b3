import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { DataSourceMissingException, Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { AgentModule } from '../agent.module';
import { AgentJobsModule } from './agent-jobs.module';
import { AgentModuleOptions } from '../agent-module.options';
import { AgentWorkerModule } from '../worker/agent-worker.module';
import { AgentWorkerOptions } from '../worker/agent-worker.options';
import { AgentJobsOptions } from './agent-jobs.options';
import { InvalidJobsOptionsException } from '../exceptions/invalid-jobs-options.exception';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { spec } from '../worker/__fixtures__/worker-fixtures';
import { AgentRunRecord } from '../worker/worker.ports';
import { AgentJob } from './agent-job.decorator';
import { AgentJobStore } from './agent-job.ports';
import { AGENT_JOB_STORE } from './agent-job-store.provider';
import { AgentJobsRunner } from './agent-jobs.runner';

@Injectable()
class ReportJobs {
  @AgentJob({
    name: 'morning-quote',
    agent: 'trader',
    cron: '* * * * *',
    timeZone: 'UTC',
    goal: 'quote ACME',
    tenantId: 't1',
    userId: 'alice',
    permissions: ['market:read'],
  })
  quote(): void {}
}

@AgentJob({ name: 'morning-quote', cron: '0 9 * * *', timeZone: 'UTC', goal: 'again', tenantId: 't1', userId: 'u', permissions: [] })
@Injectable()
class ClashingJobs {}

const trader = () => spec(new ScriptedModelProvider([{ text: 'done' }]));
const TASKS = [{ name: 'digest', agent: 'trader', goal: 'send the digest', description: 'The daily digest' }];

/** The three modules of an app with agents, a worker and jobs: AgentModule, and AgentWorkerModule and AgentJobsModule when given. */
interface AppShape extends Partial<AgentModuleOptions> {
  readonly worker?: AgentWorkerOptions;
  readonly jobs?: AgentJobsOptions;
}

function compile(options: AppShape, providers: (new () => object)[] = []): Promise<TestingModule> {
  const { worker, jobs, ...agentOptions } = options;
  return Test.createTestingModule({
    imports: [
      AgentModule.forRoot({ agents: [], ...agentOptions, guard: { auditStore: 'memory', quotaStore: 'memory' } }),
      ...(worker ? [AgentWorkerModule.forRoot(worker)] : []),
      ...(jobs ? [AgentJobsModule.forRoot(jobs)] : []),
    ],
    providers,
  }).compile();
}

describe('AgentJobsModule.forRoot(jobs)', () => {
  let app: TestingModule | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    jest.useRealTimers();
  });

  it('runs an @AgentJob once per minute boundary through the real AgentWorker, with the job scope on the run', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'], now: new Date('2026-03-02T08:59:30.000Z') });
    const model = new ScriptedModelProvider([{ text: 'ACME is at 101.5' }]);
    const results: AgentRunRecord[] = [];
    app = await compile(
      { agents: [spec(model)], worker: { runStore: 'memory', onResult: (r) => void results.push(r) }, jobs: { store: 'memory' } },
      [ReportJobs],
    );
    await app.init();
    expect(app.get(AgentJobsRunner).jobIds()).toEqual(['static:morning-quote']);
    const store = app.get<AgentJobStore>(AGENT_JOB_STORE);
    expect(await store.list('t1')).toMatchObject([{ id: 'static:morning-quote', origin: 'static', goal: 'quote ACME' }]);
    expect(results).toEqual([]);

    await jest.advanceTimersByTimeAsync(29_000); // 08:59:59: no tick yet
    expect(results).toEqual([]);
    await jest.advanceTimersByTimeAsync(2_000); // past 09:00:00
    for (let i = 0; i < 200 && results.length === 0; i++) await jest.advanceTimersByTimeAsync(10);
    await jest.advanceTimersByTimeAsync(20_000); // still before 09:01
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      status: 'succeeded',
      answer: 'ACME is at 101.5',
      agent: 'trader',
      goal: 'quote ACME',
      tenantId: 't1',
      userId: 'alice',
      permissions: ['market:read'],
      jobId: 'static:morning-quote',
      jobTick: '2026-03-02T09:00:00.000Z',
    });
    expect(await store.get('t1', 'static:morning-quote')).toMatchObject({ lastTickAt: new Date('2026-03-02T09:00:00.000Z') });

    // Closed: the scheduler stopped (at module destroy, before the worker's shutdown); the next minute posts nothing.
    const runner = app.get(AgentJobsRunner);
    await app.close();
    app = undefined;
    expect(runner.jobIds()).toEqual([]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(results).toHaveLength(1);
  });

  it('registers the four job skills; schedule_job through SkillDispatcher creates a job listed for its tenant only', async () => {
    app = await compile({
      agents: [trader()],
      worker: { runStore: 'memory' },
      jobs: { store: 'memory', schedulableTasks: TASKS, maxJobsPerTenant: 1 },
    });
    await app.init();
    const registry = app.get(SkillRegistry);
    for (const name of ['list_schedulable_tasks', 'schedule_job', 'list_jobs', 'cancel_job']) expect(registry.get(name)).toBeDefined();
    const dispatcher = app.get(SkillDispatcher);
    const guard = () => new Guard({ allow: ['list_schedulable_tasks', 'schedule_job', 'list_jobs', 'cancel_job'], allowExecute: true });
    const alice = createSkillContext({ guard: guard(), tenantId: 't1', userId: 'alice', permissions: ['digest:send'] });
    const bob = createSkillContext({ guard: guard(), tenantId: 't2', userId: 'bob', permissions: [] });

    const scheduled = await dispatcher.dispatch(alice, 'schedule_job', { task: 'digest', cron: '0 8 * * 1-5', timeZone: 'Europe/Paris' });
    expect(scheduled).toMatchObject({ ok: true, decision: 'allowed' });
    const { jobId } = scheduled.value as { jobId: string };
    const listed = await dispatcher.dispatch(alice, 'list_jobs', {});
    expect(listed.value).toEqual([
      expect.objectContaining({ id: jobId, goal: 'send the digest', cron: '0 8 * * 1-5', timeZone: 'Europe/Paris', createdBy: 'alice' }),
    ]);
    expect((await dispatcher.dispatch(bob, 'list_jobs', {})).value).toEqual([]);
    const cancelByBob = await dispatcher.dispatch(bob, 'cancel_job', { jobId });
    expect(cancelByBob.ok).toBe(false);
    expect(cancelByBob.observation).toMatch(/No job .* of this tenant/);
    // maxJobsPerTenant: 1 reached for t1; the model cannot schedule a goal it writes itself.
    const capped = await dispatcher.dispatch(alice, 'schedule_job', { task: 'digest', cron: '0 9 * * *' });
    expect(capped.ok).toBe(false);
    expect(capped.observation).toMatch(/already has 1 active jobs/);
    const written = await dispatcher.dispatch(alice, 'schedule_job', { goal: 'wire the money', cron: '0 9 * * *' });
    expect(written).toMatchObject({ ok: false, cause: 'invalid_arguments' });
    expect((await dispatcher.dispatch(alice, 'list_jobs', {})).value).toHaveLength(1);
    // The scheduler picks the new job up at its next sync.
    await app.get(AgentJobsRunner).sync();
    expect(app.get(AgentJobsRunner).jobIds()).toEqual([jobId]);
  });

  it('jobs.permissions: each job skill requires its code; a caller without it is refused and no job is stored', async () => {
    const permissions = {
      list_schedulable_tasks: 'job:read',
      schedule_job: 'job:schedule',
      list_jobs: 'job:read',
      cancel_job: 'job:schedule',
    };
    app = await compile({
      agents: [trader()],
      worker: { runStore: 'memory' },
      jobs: { store: 'memory', schedulableTasks: TASKS, permissions },
    });
    await app.init();
    const registry = app.get(SkillRegistry);
    for (const [name, code] of Object.entries(permissions)) expect(registry.get(name)?.requiredPermission).toBe(code);
    const dispatcher = app.get(SkillDispatcher);
    const store = app.get<AgentJobStore>(AGENT_JOB_STORE);
    const as = (codes: string[]) =>
      createSkillContext({
        guard: new Guard({ allow: Object.keys(permissions), allowExecute: true }),
        tenantId: 't1',
        userId: 'alice',
        permissions: codes,
      });
    const denied = (permission: string) => ({ error: 'PermissionDenied', reason: 'missing_permission', permission });

    const refused = await dispatcher.dispatch(as(['job:read']), 'schedule_job', { task: 'digest', cron: '0 8 * * *' });
    expect(refused).toMatchObject({ ok: false, cause: 'missing_permission', outcome: 'forbidden' });
    expect(refused.error).toEqual(denied('job:schedule'));
    expect(await store.list('t1')).toEqual([]);
    expect((await dispatcher.dispatch(as([]), 'list_jobs', {})).error).toEqual(denied('job:read'));
    expect((await dispatcher.dispatch(as([]), 'list_schedulable_tasks', {})).error).toEqual(denied('job:read'));

    const scheduled = await dispatcher.dispatch(as(['job:schedule']), 'schedule_job', { task: 'digest', cron: '0 8 * * *' });
    expect(scheduled).toMatchObject({ ok: true, decision: 'allowed' });
    const { jobId } = scheduled.value as { jobId: string };
    expect((await dispatcher.dispatch(as(['job:read']), 'list_jobs', {})).value).toEqual([expect.objectContaining({ id: jobId })]);
    expect((await dispatcher.dispatch(as(['job:read']), 'cancel_job', { jobId })).error).toEqual(denied('job:schedule'));
    expect(await store.get('t1', jobId)).toMatchObject({ id: jobId });
    expect((await dispatcher.dispatch(as(['job:schedule']), 'cancel_job', { jobId })).value).toEqual({ cancelled: true });
  });

  it('jobs.permissions reads own keys only (an inherited code fails boot); a skill left out requires nothing', async () => {
    const inherited = Object.assign(Object.create({ list_jobs: 'job:read' }) as object, { schedule_job: 'job:schedule' });
    await expect(
      compile({ agents: [trader()], worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: inherited } }).then((a) =>
        a.init(),
      ),
    ).rejects.toThrow(/'jobs\.permissions\.list_jobs': is inherited/);
    app = await compile({
      agents: [trader()],
      worker: { runStore: 'memory' },
      jobs: { store: 'memory', permissions: { schedule_job: 'job:schedule' } },
    });
    await app.init();
    const registry = app.get(SkillRegistry);
    expect(registry.get('schedule_job')?.requiredPermission).toBe('job:schedule');
    for (const name of ['list_schedulable_tasks', 'list_jobs', 'cancel_job'])
      expect(registry.get(name)?.requiredPermission).toBeUndefined();
  });

  it('fails boot on bad jobs options, naming the field', async () => {
    const cases: [AppShape, RegExp][] = [
      [{ jobs: { store: 'memory' } }, /'AgentJobsModule'.*AgentWorkerModule\.forRoot/],
      [{ worker: { runStore: 'memory' }, jobs: { store: 'redis' as never } }, /'jobs\.store'/],
      [{ worker: { runStore: 'memory' }, jobs: { store: 'memory', syncMs: 5 } }, /'jobs\.syncMs'.*1000/],
      [{ worker: { runStore: 'memory' }, jobs: { store: 'memory', maxJobsPerTenant: 0 } }, /'jobs\.maxJobsPerTenant'/],
      [{ worker: { runStore: 'memory' }, jobs: { store: 'memory', maxJobLifetimeMs: 5 } }, /'jobs\.maxJobLifetimeMs': must be an integer/],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', schedulableTasks: [{ name: 'x', goal: 'y', permissions: [''] }] } },
        /'jobs\.schedulableTasks': .*task "x": permissions/,
      ],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', schedulableTasks: [...TASKS, ...TASKS] } },
        /'jobs\.schedulableTasks'.*twice/,
      ],
      [{ worker: { runStore: 'memory' }, jobs: { store: 'memory', schedulableTasks: 'digest' as never } }, /'jobs\.schedulableTasks'/],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: { schedule_job: '' } } },
        /'jobs\.permissions\.schedule_job': expected a permission code/,
      ],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: { list_jobs: 7 as never } } },
        /'jobs\.permissions\.list_jobs': expected a permission code.*got number/,
      ],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: { cancel_job: 'job:\tschedule' } } },
        /'jobs\.permissions\.cancel_job': .*without control characters/,
      ],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: { delete_job: 'job:schedule' } as never } },
        /'jobs\.permissions\.delete_job': no such skill here: the keys are list_schedulable_tasks, schedule_job, list_jobs, cancel_job/,
      ],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: { constructor: 'job:read' } as never } },
        /'jobs\.permissions\.constructor': no such skill/,
      ],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: JSON.parse('{"__proto__":"job:read"}') as never } },
        /'jobs\.permissions\.__proto__': no such skill/,
      ],
      [
        { worker: { runStore: 'memory' }, jobs: { store: 'memory', permissions: 'job:read' as never } },
        /'jobs\.permissions': expected an object/,
      ],
    ];
    for (const [options, message] of cases) {
      const err = await compile(options).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidJobsOptionsException);
      expect((err as Error).message).toMatch(message);
    }
    // The default store and no DataSource: the one error of every module with a store, naming the option.
    const err = await compile({ worker: { runStore: 'memory' }, jobs: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataSourceMissingException);
    expect((err as Error).message).toMatch(/AgentJobsModule\.forRoot\(\{ store \}\) is 'typeorm'.*TypeOrmModule\.forRoot.*'memory'/);
  });

  it('fails boot when two providers declare @AgentJob with one name', async () => {
    const module = await compile({ agents: [trader()], worker: { runStore: 'memory' }, jobs: { store: 'memory' } }, [
      ReportJobs,
      ClashingJobs,
    ]);
    await expect(module.init()).rejects.toThrow(/@AgentJob "morning-quote" is declared twice \(ReportJobs\.quote and ClashingJobs\)/);
    // Init failed at module init: the worker and the scheduler never started (Nest's close would rethrow the init error).
    expect(module.get(AgentJobsRunner).jobIds()).toEqual([]);
  });

  it('fails boot when a schedulable task or an @AgentJob names an agent the application does not define', async () => {
    const agents = [trader()];
    const badTask = await compile({
      agents,
      worker: { runStore: 'memory' },
      jobs: { store: 'memory', schedulableTasks: [{ name: 'digest', agent: 'reporter', goal: 'send the digest' }] },
    });
    await expect(badTask.init()).rejects.toThrow(/'jobs\.schedulableTasks\[0\]\.agent'.*no agent named 'reporter' \(agents: trader\)/);
    const badJob = await compile({ worker: { runStore: 'memory' }, jobs: { store: 'memory' } }, [ReportJobs]);
    await expect(badJob.init()).rejects.toThrow(/@AgentJob "morning-quote" on ReportJobs\.quote: no agent named 'trader' \(agents: none\)/);
  });

  it('without jobs, registers no job skill', async () => {
    app = await compile({ worker: { runStore: 'memory' } });
    await app.init();
    expect(app.get(SkillRegistry).get('schedule_job')).toBeUndefined();
    expect(() => app!.get(AgentJobsRunner, { strict: false })).toThrow(); // AgentJobsModule's, absent without it
  });
});
