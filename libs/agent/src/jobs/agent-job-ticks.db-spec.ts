import { Injectable } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, TestingModule } from '@nestjs/testing';
import { createTestDatabase, TestDatabase, usingPostgres } from '@zmodu/db/testing';
import { DataSource } from 'typeorm';
import { AgentModule } from '../agent.module';
import { AgentWorkerModule } from '../worker/agent-worker.module';
import { AgentJobsModule } from './agent-jobs.module';
import { InvalidGoalException } from '../exceptions/invalid-goal.exception';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { spec } from '../worker/__fixtures__/worker-fixtures';
import { ZMODU_AGENT_MIGRATIONS } from '../worker/agent-run.migration';
import { TypeOrmAgentRunStore } from '../worker/typeorm-agent-run.store';
import { AgentCron } from './agent-cron.decorator';
import { AgentJobTicks, AgentTickOutcome } from './agent-job-ticks';
import { TypeOrmAgentJobStore } from './typeorm-agent-job.store';

/** How many times each instance's method body ran (it runs on the instance that won the tick only). */
const bodies: { instance: number; tick: string }[] = [];

@Injectable()
class HourlyReport {
  static next = 0;
  readonly instance = HourlyReport.next++;

  @AgentCron('0 * * * *', { name: 'hourly-report', tenantId: 't1', userId: 'ops-bot', permissions: ['report:send'] })
  report(tick: Date): string {
    bodies.push({ instance: this.instance, tick: tick.toISOString() });
    return `Send the report of the hour before ${tick.toISOString()}`;
  }
}

const INSTANCES = 5;
const GOAL = { goal: 'Send the hourly report', tenantId: 't1', userId: 'ops-bot', permissions: ['report:send'] };

describe(`AgentJobTicks and @AgentCron: one goal per tick across ${INSTANCES} Nest apps on one ${usingPostgres() ? 'PostgreSQL' : 'PGlite'} database`, () => {
  let db: TestDatabase;
  /** The DataSources the apps use: one each on PostgreSQL (a pool of its own, as separate processes have); one shared on PGlite (one process opens its folder). */
  const sources: DataSource[] = [];
  let apps: TestingModule[] = [];

  const open = async () => {
    const ds = new DataSource(await db.options());
    await ds.initialize();
    sources.push(ds);
    return ds;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const first = new DataSource(await db.options({ migrations: ZMODU_AGENT_MIGRATIONS }));
    await first.initialize();
    await first.runMigrations();
    sources.push(first);
    for (let i = 0; i < INSTANCES; i++) {
      const ds = i === 0 || !usingPostgres() ? first : await open();
      const app = await Test.createTestingModule({
        imports: [
          ScheduleModule.forRoot(),
          AgentModule.forRoot({
            agents: [spec(new ScriptedModelProvider(Array.from({ length: 50 }, () => ({ text: 'sent' }))), { name: 'ops' })],
            guard: { auditStore: 'memory', quotaStore: 'memory' },
          }),
          AgentWorkerModule.forRoot({ runStore: new TypeOrmAgentRunStore(ds) }),
          AgentJobsModule.forRoot({ store: new TypeOrmAgentJobStore(ds) }),
        ],
        providers: [HourlyReport],
      }).compile();
      apps.push(await app.init());
    }
  }, 120_000);

  afterAll(async () => {
    for (const app of apps) await app.close();
    apps = [];
    for (const ds of sources) if (ds.isInitialized) await ds.destroy();
    await db?.drop();
  });

  /** The runs of these ticks (ScheduleModule's own timers may fire a real tick meanwhile: it is left out). */
  const runsOf = async (jobId: string, ticks: string[]) =>
    (await sources[0].query(
      `SELECT id, job_tick, goal FROM zmodu_agent_runs WHERE job_id = $1 AND job_tick = ANY($2::text[]) ORDER BY job_tick`,
      [jobId, ticks],
    )) as {
      id: string;
      job_tick: string;
      goal: string;
    }[];

  it('postOnce: 10 callers on each app at once for each of 3 ticks (150 calls) post exactly one goal per tick', async () => {
    const ticks = ['2026-03-02T09:00:00.000Z', '2026-03-02T10:00:00.000Z', '2026-03-02T11:00:00.000Z'].map((t) => new Date(t));
    const calls: Promise<AgentTickOutcome>[] = [];
    for (let round = 0; round < 10; round++)
      for (const app of apps)
        for (const tick of ticks) calls.push(app.get(AgentJobTicks).postOnce('hourly-mail', new Date(tick), { ...GOAL, agent: 'ops' }));
    const outcomes = await Promise.all(calls);
    const won = outcomes.filter((o) => o.posted);
    expect(outcomes).toHaveLength(150);
    expect(won.map((o) => o.tick.toISOString()).sort()).toEqual(ticks.map((t) => t.toISOString()));
    expect(outcomes.filter((o) => !o.posted).every((o) => o.runId === null)).toBe(true);

    const runs = await runsOf(
      'cron:hourly-mail',
      ticks.map((t) => t.toISOString()),
    );
    expect(runs.map((r) => r.job_tick)).toEqual(ticks.map((t) => t.toISOString()));
    expect(runs.map((r) => r.id).sort()).toEqual(won.map((o) => o.runId).sort());
    // Each claim holds its run.
    const claims = await sources[0].query(`SELECT run_id FROM zmodu_agent_job_ticks WHERE job_id = 'cron:hourly-mail' ORDER BY tick`);
    expect(claims.map((c: { run_id: string }) => c.run_id)).toEqual(runs.map((r) => r.id));
    // A later caller of a posted tick (a late instance) posts nothing.
    expect(await apps[3].get(AgentJobTicks).postOnce('hourly-mail', ticks[0], GOAL)).toMatchObject({ posted: false, runId: null });
  }, 60_000);

  it('@AgentCron: every instance fires each tick (its clock a few ms apart); the method runs and its goal is posted once per tick', async () => {
    bodies.length = 0;
    const registry = apps[0].get(SchedulerRegistry);
    expect(registry.getCronJob('hourly-report').cronTime.source).toBe('0 * * * *');
    const reports = apps.map((app) => app.get(HourlyReport));
    expect(new Set(reports.map((r) => r.instance)).size).toBe(INSTANCES);
    const ticks = ['2026-03-02T12:00:00.000Z', '2026-03-02T13:00:00.000Z'];
    // What @Cron calls on each instance, with the instant its timer fired: 0 to 40 ms after the tick, 4 firings each.
    const fire = (r: HourlyReport, at: Date) => (r.report as unknown as (at: Date) => Promise<AgentTickOutcome | null>).call(r, at);
    const outcomes = await Promise.all(
      reports.flatMap((r, i) => ticks.flatMap((t) => [0, 1, 2, 3].map((k) => fire(r, new Date(Date.parse(t) + i * 7 + k * 3))))),
    );
    expect(
      outcomes
        .filter((o) => o?.posted)
        .map((o) => o!.tick.toISOString())
        .sort(),
    ).toEqual(ticks);
    expect(
      bodies
        .map((b) => b.tick)
        .filter((t) => ticks.includes(t))
        .sort(),
    ).toEqual(ticks);
    const runs = await runsOf('cron:hourly-report', ticks);
    expect(runs.map((r) => [r.job_tick, r.goal])).toEqual(ticks.map((t) => [t, `Send the report of the hour before ${t}`]));
  }, 60_000);

  it('postOnce refuses a bad name, tick or goal before claiming anything', async () => {
    const ticks = apps[0].get(AgentJobTicks);
    const tick = new Date('2026-03-02T14:00:00.000Z');
    await expect(ticks.postOnce('', tick, GOAL)).rejects.toThrow(/name is required/);
    await expect(ticks.postOnce('x\u0000y', tick, GOAL)).rejects.toThrow(/no control characters/);
    await expect(ticks.postOnce('report', new Date('nope'), GOAL)).rejects.toThrow(/tick must be a valid Date/);
    await expect(ticks.postOnce('report', tick, { ...GOAL, goal: ' ' })).rejects.toThrow(InvalidGoalException);
    await expect(ticks.postOnce('report', tick, { ...GOAL, tenantId: '' })).rejects.toThrow(InvalidGoalException);
    await expect(ticks.postOnce('report', tick, { ...GOAL, agent: 'nobody' })).rejects.toThrow(/no agent named 'nobody'/);
    const claimed = await sources[0].query(`SELECT job_id FROM zmodu_agent_job_ticks WHERE job_id IN ('cron:', 'cron:report')`);
    expect(claimed).toEqual([]);
    // The same tick then posts normally.
    expect(await ticks.postOnce('report', tick, GOAL)).toMatchObject({ posted: true, runId: expect.any(String) });
  });

  it('tickOf: the tick at or before an instant, the same on every instance whatever its milliseconds', () => {
    expect(AgentJobTicks.tickOf('0 * * * *', 'UTC', new Date('2026-03-02T09:00:00.000Z'))).toEqual(new Date('2026-03-02T09:00:00.000Z'));
    expect(AgentJobTicks.tickOf('0 * * * *', 'UTC', new Date('2026-03-02T09:59:59.999Z'))).toEqual(new Date('2026-03-02T09:00:00.000Z'));
    expect(AgentJobTicks.tickOf('30 8 * * 1', 'Europe/Paris', new Date('2026-03-04T12:00:00.000Z'))).toEqual(
      new Date('2026-03-02T07:30:00.000Z'),
    );
    expect(() => AgentJobTicks.tickOf('*/10 * * * * *')).toThrow(/more than once a minute/);
    expect(() => AgentJobTicks.tickOf('0 * * * *', 'Mars/Olympus')).toThrow(/time zone/);
  });
});
