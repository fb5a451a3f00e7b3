import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Guard } from '@zmodu/guard';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { DataSource } from 'typeorm';
import { AgentModule } from '../agent.module';
import { AgentWorkerModule } from '../worker/agent-worker.module';
import { AgentJobsModule } from './agent-jobs.module';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { spec } from '../worker/__fixtures__/worker-fixtures';
import { ZMODU_AGENT_MIGRATIONS } from '../worker/agent-run.migration';
import { AgentJob } from './agent-job.decorator';
import { AgentJobsRunner } from './agent-jobs.runner';

@AgentJob({
  name: 'nightly',
  cron: '0 2 * * *',
  timeZone: 'Europe/Paris',
  goal: 'quote ACME',
  tenantId: 't1',
  userId: 'ops',
  permissions: ['market:read'],
})
@Injectable()
class NightlyJobs {}

@AgentJob({
  name: 'weekly',
  cron: '0 6 * * 1',
  timeZone: 'UTC',
  goal: 'quote GLOBEX',
  tenantId: 't1',
  userId: 'ops',
  permissions: ['market:read'],
})
@Injectable()
class WeeklyJobs {}

describe("AgentJobsModule.forRoot({ store: 'typeorm' }) on the app's DataSource", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  const boot = async (jobProviders: (new () => object)[] = [NightlyJobs]): Promise<TestingModule> => {
    const app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_AGENT_MIGRATIONS, migrationsRun: true })),
        AgentModule.forRoot({
          agents: [spec(new ScriptedModelProvider([{ text: 'done' }]))],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
        AgentWorkerModule.forRoot({ runStore: 'typeorm' }),
        AgentJobsModule.forRoot({ schedulableTasks: [{ name: 'digest', goal: 'send the digest', permissions: ['digest:send'] }] }),
      ],
      providers: jobProviders,
    }).compile();
    return app.init();
  };
  const ctx = (tenantId: string, userId: string) =>
    createSkillContext({
      guard: new Guard({ allow: ['schedule_job', 'list_jobs'], allowExecute: true }),
      tenantId,
      userId,
      permissions: [],
    });

  it('stores the static job once across restarts and keeps a job scheduled through schedule_job, for its tenant only', async () => {
    const first = await boot();
    const scheduled = await first.get(SkillDispatcher).dispatch(ctx('t1', 'alice'), 'schedule_job', { task: 'digest', cron: '30 7 * * *' });
    expect(scheduled.ok).toBe(true);
    const { jobId } = scheduled.value as { jobId: string };
    await first.close();

    const second = await boot();
    try {
      const dispatcher = second.get(SkillDispatcher);
      const listed = (await dispatcher.dispatch(ctx('t1', 'bob'), 'list_jobs', {})).value as { id: string }[];
      expect(listed.map((j) => j.id).sort()).toEqual([jobId, 'static:nightly'].sort());
      expect((await dispatcher.dispatch(ctx('t2', 'carol'), 'list_jobs', {})).value).toEqual([]);
      expect(second.get(AgentJobsRunner).jobIds().sort()).toEqual([jobId, 'static:nightly'].sort());
      const rows = await second.get(DataSource).query("SELECT id, origin FROM zmodu_agent_jobs WHERE origin = 'static'");
      expect(rows).toEqual([{ id: 'static:nightly', origin: 'static' }]);
    } finally {
      await second.close();
    }
  }, 60_000);

  it("narrows at boot a job stored with all its creator's permissions and no expiry (attack: an old job keeps an admin's 17 permissions)", async () => {
    const first = await boot();
    const ds = first.get(DataSource);
    const admin = Array.from({ length: 16 }, (_, i) => `perm:${i}`).concat('digest:send');
    // As schedule_job stored a job before tasks declared permissions: the creator's whole token, no task, no expiry.
    await ds.query(
      `INSERT INTO zmodu_agent_jobs (id, tenant_id, user_id, permissions, agent, goal, cron, time_zone, missed, origin)
       VALUES ('legacy', 't1', 'root', $1::jsonb, NULL, 'send the digest', '0 9 * * *', 'UTC', 'skip', 'dynamic'),
              ('orphan', 't1', 'root', $1::jsonb, NULL, 'a goal no task has', '0 9 * * *', 'UTC', 'skip', 'dynamic')`,
      [JSON.stringify(admin)],
    );
    await first.close();
    const second = await boot();
    try {
      const rows: Array<{ id: string; permissions: unknown; task: string | null; expires_at: Date | null; created_at: Date }> = await second
        .get(DataSource)
        .query(`SELECT id, permissions, task, expires_at, created_at FROM zmodu_agent_jobs WHERE id IN ('legacy', 'orphan') ORDER BY id`);
      const perms = (v: unknown) => (typeof v === 'string' ? (JSON.parse(v) as string[]) : v);
      expect(rows.map((r) => [r.id, perms(r.permissions), r.task])).toEqual([
        ['legacy', ['digest:send'], 'digest'],
        ['orphan', [], null],
      ]);
      // Given the default lifetime (90 days) at this boot, after they were stored: both stored times, one after the other.
      for (const r of rows)
        expect(new Date(r.expires_at as Date).getTime() - new Date(r.created_at).getTime()).toBeGreaterThanOrEqual(90 * 86_400_000);
    } finally {
      await second.close();
    }
  }, 60_000);

  it('retires a static job whose @AgentJob is gone, refuses cancel_job on a static job, and revives it when declared again', async () => {
    const both = await boot([NightlyJobs, WeeklyJobs]);
    const refused = await both.get(SkillDispatcher).dispatch(
      createSkillContext({
        guard: new Guard({ allow: ['cancel_job'], allowExecute: true }),
        tenantId: 't1',
        userId: 'alice',
        permissions: [],
      }),
      'cancel_job',
      { jobId: 'static:weekly' },
    );
    expect(refused).toMatchObject({ ok: false });
    expect(JSON.stringify(refused)).toMatch(/static_job/);
    await both.close();
    const active = async (app: TestingModule) =>
      (await app.get(DataSource).query("SELECT id FROM zmodu_agent_jobs WHERE origin = 'static' AND cancelled_at IS NULL ORDER BY id")).map(
        (r: { id: string }) => r.id,
      );

    const nightlyOnly = await boot([NightlyJobs]);
    try {
      expect(await active(nightlyOnly)).toEqual(['static:nightly']);
      expect(nightlyOnly.get(AgentJobsRunner).jobIds()).not.toContain('static:weekly');
    } finally {
      await nightlyOnly.close();
    }
    const again = await boot([NightlyJobs, WeeklyJobs]);
    try {
      expect(await active(again)).toEqual(['static:nightly', 'static:weekly']);
      expect(again.get(AgentJobsRunner).jobIds()).toContain('static:weekly');
    } finally {
      await again.close();
    }
    // An instance of the application that declares no @AgentJob (an API-only role) retires nothing.
    const apiOnly = await boot([]);
    try {
      expect(await active(apiOnly)).toEqual(['static:nightly', 'static:weekly']);
    } finally {
      await apiOnly.close();
    }
  }, 90_000);
});
