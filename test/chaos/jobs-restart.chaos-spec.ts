import { INestApplication } from '@nestjs/common';
import { AGENT_JOB_STORE, AgentJobStore } from '@zmodu/agent';
import { AgentJobsRunner, NewAgentJob } from '@zmodu/agent/internal';
import { DataSource } from 'typeorm';
import { pausePostgres, resumePostgres, sampleOnOwnServerForSuite } from '../support/own-postgres';
import { CHAOS_SECRET as SECRET, sleep } from '../support/sample-process';
import { DESK_JOB_PERMISSIONS, MORNING_SUMMARY_GOAL } from '../../apps/sample/src/jobs/desk-jobs';

/**
 * PostgreSQL down at the very moment scheduled jobs tick: their timers fire, the tick claims cannot reach the database.
 * Once it is back, without a restart of the app, the job sync posts the `catch_up` job's tick once (however many syncs
 * run at once) and its run ends succeeded; the `skip` job's tick stays missed, as documented; the schedule goes on.
 */
describe('chaos: PostgreSQL down when scheduled jobs tick', () => {
  let app: INestApplication;
  let dir: string;

  sampleOnOwnServerForSuite(SECRET, (own) => ({ app, dir } = own));

  it('a catch_up tick missed by the outage runs once after it, a skip tick never; nothing runs twice', async () => {
    const store = app.get<AgentJobStore>(AGENT_JOB_STORE);
    const runner = app.get(AgentJobsRunner);
    const ds = app.get(DataSource);
    const base: Omit<NewAgentJob, 'id' | 'missed'> = {
      tenantId: 'acme',
      userId: 'desk-bot',
      permissions: DESK_JOB_PERMISSIONS,
      agent: 'analyst',
      goal: MORNING_SUMMARY_GOAL,
      cron: '* * * * *',
      timeZone: 'UTC',
      origin: 'dynamic',
    };
    // Far enough from the next minute for the jobs to be armed and the server stopped before it.
    if (60_000 - (Date.now() % 60_000) < 8_000) await sleep(60_000 - (Date.now() % 60_000) + 500);
    await store.upsert({ ...base, id: 'chaos-catch-up', missed: 'catch_up' });
    await store.upsert({ ...base, id: 'chaos-skip', missed: 'skip' });
    await runner.sync();
    expect(runner.jobIds()).toEqual(expect.arrayContaining(['chaos-catch-up', 'chaos-skip']));
    const tick = new Date(Math.ceil(Date.now() / 60_000) * 60_000);
    await sleep(tick.getTime() - Date.now() - 2_000);
    await pausePostgres(dir);
    await sleep(tick.getTime() - Date.now() + 1_500); // both timers fire now, their claims refused
    await resumePostgres(dir);
    // The periodic sync, as it comes every syncMs on every instance: five at once here (two instances' worth and more).
    await Promise.all(Array.from({ length: 5 }, () => runner.sync().catch(() => undefined)));
    await runner.sync();
    const runsOf = async (jobId: string) =>
      (await ds.query(`SELECT job_tick AS "tick", status FROM zmodu_agent_runs WHERE job_id = $1 ORDER BY job_tick`, [jobId])) as {
        tick: string;
        status: string;
      }[];
    let caught: { tick: string; status: string }[] = [];
    for (let i = 0; i < 100; i++) {
      caught = await runsOf('chaos-catch-up');
      if (caught.length && caught.every((r) => r.status === 'succeeded' || r.status === 'failed')) break;
      await sleep(200);
    }
    // The missed tick, once (a later tick may have come meanwhile: each tick at most once).
    expect(caught.filter((r) => r.tick === tick.toISOString())).toEqual([{ tick: tick.toISOString(), status: 'succeeded' }]);
    expect(new Set(caught.map((r) => r.tick)).size).toBe(caught.length);
    expect((await runsOf('chaos-skip')).filter((r) => r.tick === tick.toISOString())).toEqual([]);
    const [claim] = await ds.query(`SELECT run_id FROM zmodu_agent_job_ticks WHERE job_id = 'chaos-catch-up' AND tick = $1`, [tick]);
    expect(claim.run_id).toEqual(expect.any(String));
    // The schedule goes on: both jobs armed again for the next tick.
    expect(runner.jobIds()).toEqual(expect.arrayContaining(['chaos-catch-up', 'chaos-skip']));
  }, 150_000);
});
