import { Injectable } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, TestingModule } from '@nestjs/testing';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { CronJob } from 'cron';
import { logsOf } from '../__fixtures__/logs-of';
import { AgentModule } from '../agent.module';
import { AgentWorkerModule } from '../worker/agent-worker.module';
import { AgentJobsModule } from './agent-jobs.module';
import { AgentJobsOptions } from './agent-jobs.options';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { spec } from '../worker/__fixtures__/worker-fixtures';
import { AgentRunRecord } from '../worker/worker.ports';
import { AgentJob } from './agent-job.decorator';
import { AgentJobStore } from './agent-job.ports';
import { agentJobCronName } from './agent-job-scheduler';
import { AGENT_JOB_STORE } from './agent-job-store.provider';
import { AgentJobsRunner } from './agent-jobs.runner';

@Injectable()
class MinutelyJobs {
  @AgentJob({
    name: 'minutely',
    agent: 'trader',
    cron: '* * * * *',
    timeZone: 'UTC',
    goal: 'quote ACME',
    tenantId: 't1',
    userId: 'alice',
    permissions: ['market:read'],
    missed: 'catch_up',
  })
  quote(): void {}
}

/** An application cron job that took the name of the agent job (a bad idea): the agent job still runs, unlisted. */
@Injectable()
class SquattingCron {
  ticks = 0;
  @Cron('0 0 1 1 *', { name: 'zmodu:job:static:minutely' })
  tick(): void {
    this.ticks++;
  }
}

const NAME = agentJobCronName('static:minutely');
const TASKS = [{ name: 'digest', agent: 'trader', goal: 'send the digest', description: 'The daily digest' }];

describe("agent jobs in @nestjs/schedule's SchedulerRegistry", () => {
  let app: TestingModule | undefined;
  let results: AgentRunRecord[];
  afterEach(async () => {
    await app?.close();
    app = undefined;
    jest.useRealTimers();
  });

  const boot = async (withSchedule: boolean, providers: (new () => object)[] = [MinutelyJobs], jobs: AgentJobsOptions = {}) => {
    results = [];
    const model = new ScriptedModelProvider(Array.from({ length: 20 }, () => ({ text: 'ACME is at 101.5' })));
    app = await Test.createTestingModule({
      imports: [
        ...(withSchedule ? [ScheduleModule.forRoot()] : []),
        AgentModule.forRoot({ agents: [spec(model)], guard: { auditStore: 'memory', quotaStore: 'memory' } }),
        AgentWorkerModule.forRoot({ runStore: 'memory', onResult: (r) => void results.push(r) }),
        AgentJobsModule.forRoot({ store: 'memory', schedulableTasks: TASKS, ...jobs }),
      ],
      providers,
    }).compile();
    await app.init();
    return app;
  };
  /** Advance the fake clock by `ms`, then let the posted runs finish (bounded). */
  const advance = async (ms: number, runs: number) => {
    await jest.advanceTimersByTimeAsync(ms);
    for (let i = 0; i < 200 && results.length < runs; i++) await jest.advanceTimersByTimeAsync(10);
  };
  const fakeClock = (at: string) => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'], now: new Date(at) });

  it('lists each armed job as zmodu:job:<job id>, its timer a CronJob; a dynamic job joins at the sync and leaves when cancelled', async () => {
    fakeClock('2026-03-02T08:59:30.000Z');
    const a = await boot(true);
    const registry = a.get(SchedulerRegistry);
    expect([...registry.getCronJobs().keys()]).toEqual([NAME]);
    const job = registry.getCronJob(NAME);
    expect(job).toBeInstanceOf(CronJob);
    expect(job.isActive).toBe(true);
    expect(job.nextDate().toJSDate()).toEqual(new Date('2026-03-02T09:00:00.000Z'));

    const ctx = createSkillContext({
      guard: new Guard({ allow: ['schedule_job', 'cancel_job'], allowExecute: true }),
      tenantId: 't1',
      userId: 'alice',
      permissions: [],
    });
    const scheduled = await a.get(SkillDispatcher).dispatch(ctx, 'schedule_job', { task: 'digest', cron: '0 8 * * 1-5' });
    const { jobId } = scheduled.value as { jobId: string };
    await a.get(AgentJobsRunner).sync();
    expect([...registry.getCronJobs().keys()].sort()).toEqual([NAME, agentJobCronName(jobId)].sort());
    expect(registry.getCronJob(agentJobCronName(jobId)).nextDate().toJSDate()).toEqual(new Date('2026-03-03T08:00:00.000Z'));

    expect((await a.get(SkillDispatcher).dispatch(ctx, 'cancel_job', { jobId })).ok).toBe(true);
    await a.get(AgentJobsRunner).sync();
    expect([...registry.getCronJobs().keys()]).toEqual([NAME]);

    // Closed: our jobs leave the registry at module destroy, before ScheduleModule's own shutdown.
    await a.close();
    app = undefined;
    expect([...registry.getCronJobs().keys()]).toEqual([]);
  });

  it('stop() through the registry claims no tick from then on (nor catches one up); start() resumes at the next tick', async () => {
    fakeClock('2026-03-02T08:59:30.000Z');
    const a = await boot(true);
    const registry = a.get(SchedulerRegistry);
    const store = a.get<AgentJobStore>(AGENT_JOB_STORE);

    await advance(31_000, 1); // 09:00:01: the 09:00 tick ran
    expect(results.map((r) => r.jobTick)).toEqual(['2026-03-02T09:00:00.000Z']);

    void registry.getCronJob(NAME).stop();
    expect(registry.getCronJob(NAME).isActive).toBe(false);
    await advance(3 * 60_000, 2); // 09:03:01: three ticks passed, none claimed
    await a.get(AgentJobsRunner).sync(); // a catch_up job stopped catches nothing up either
    expect(results).toHaveLength(1);
    expect((await store.get('t1', 'static:minutely'))?.lastTickAt).toEqual(new Date('2026-03-02T09:00:00.000Z'));
    expect(a.get(AgentJobsRunner).jobIds()).toEqual(['static:minutely']); // still armed, only stopped

    registry.getCronJob(NAME).start();
    await a.get(AgentJobsRunner).sync(); // started again: the ticks of the stopped time are not caught up
    expect(results).toHaveLength(1);
    await advance(60_000, 2); // 09:04:01
    expect(results.map((r) => r.jobTick)).toEqual(['2026-03-02T09:00:00.000Z', '2026-03-02T09:04:00.000Z']);
    expect(results[1]).toMatchObject({ status: 'succeeded', jobId: 'static:minutely', tenantId: 't1', userId: 'alice' });
  });

  it('a job changed elsewhere while stopped here is re-armed stopped; deleteCronJob stops it until the next boot', async () => {
    fakeClock('2026-03-02T08:59:30.000Z');
    const a = await boot(true);
    const registry = a.get(SchedulerRegistry);
    const store = a.get<AgentJobStore>(AGENT_JOB_STORE);
    void registry.getCronJob(NAME).stop();
    const record = (await store.get('t1', 'static:minutely'))!;
    await store.upsert({ ...record, cron: '*/2 * * * *' }); // another instance's boot changed its schedule
    await a.get(AgentJobsRunner).sync();
    expect(registry.getCronJob(NAME).isActive).toBe(false);
    expect(registry.getCronJob(NAME).cronTime.source).toBe('*/2 * * * *');
    await advance(3 * 60_000, 1);
    expect(results).toHaveLength(0);

    registry.getCronJob(NAME).start();
    registry.deleteCronJob(NAME);
    await a.get(AgentJobsRunner).sync();
    expect(registry.doesExist('cron', NAME)).toBe(false);
    await advance(3 * 60_000, 1);
    expect(results).toHaveLength(0);
  });

  it('without ScheduleModule the jobs run unlisted; a name already taken in the registry is logged and the job still runs', async () => {
    fakeClock('2026-03-02T08:59:30.000Z');
    await boot(false);
    await advance(31_000, 1);
    expect(results.map((r) => r.jobTick)).toEqual(['2026-03-02T09:00:00.000Z']);
    await app!.close();
    app = undefined;

    const lines = await logsOf(async () => {
      const a = await boot(true, [MinutelyJobs, SquattingCron]);
      expect(a.get(SchedulerRegistry).getCronJob(NAME).cronTime.source).toBe('0 0 1 1 *'); // the application's own
      await advance(60_000, 1);
    });
    expect(results.map((r) => r.jobTick)).toEqual(['2026-03-02T09:01:00.000Z']);
    expect(app!.get(SquattingCron).ticks).toBe(0);
    expect(lines.join('\n')).toMatch(
      /already has a cron job named zmodu:job:static:minutely: job static:minutely runs, but is not listed there/,
    );
  });
});
