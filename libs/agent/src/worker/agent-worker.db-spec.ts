import { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { timersDuring } from '../__fixtures__/scheduled-timers';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { compileWorkerApp, GatedModel, SCOPE, spec, until } from './__fixtures__/worker-fixtures';
import { ZMODU_AGENT_MIGRATIONS } from './agent-run.migration';
import { AgentWorker } from './agent-worker';
import { TypeOrmAgentRunStore } from './typeorm-agent-run.store';
import { AgentRunRecord } from './worker.ports';
import { MailboxFullException } from '../exceptions/mailbox-full.exception';

describe('AgentWorker on TypeOrmAgentRunStore: restarts and shutdown', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const apps: TestingModule[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource(await db.options({ migrations: ZMODU_AGENT_MIGRATIONS }));
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const store = () => new TypeOrmAgentRunStore(dataSource);

  it('keeps a goal posted before the worker started (and the app closed) and runs it at the next start', async () => {
    await dataSource.query('TRUNCATE zmodu_agent_runs CASCADE');
    const first = await compileWorkerApp([spec(new GatedModel())], { runStore: store() });
    const { runId } = await first.get(AgentWorker).post('quote ACME', SCOPE);
    await first.close(); // never initialised: the worker did not start, the goal stays queued
    expect(await store().get('t1', runId)).toMatchObject({ status: 'queued', attempts: 0 });

    const results: AgentRunRecord[] = [];
    const second = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'ACME is 101.5' }]))], {
      runStore: store(),
      onResult: (r) => void results.push(r),
    });
    apps.push(second);
    await second.init();
    await until(() => results.length === 1, 'the recovered run');
    expect(results[0]).toMatchObject({
      id: runId,
      status: 'succeeded',
      answer: 'ACME is 101.5',
      attempts: 1,
      tenantId: 't1',
      userId: 'alice',
    });
    expect(await second.get(AgentWorker).get('t1', runId)).toMatchObject({ status: 'succeeded', answer: 'ACME is 101.5' });
    expect(await second.get(AgentWorker).get('t2', runId)).toBeNull();
  });

  it('stores many posts at once and runs each once', async () => {
    await dataSource.query('TRUNCATE zmodu_agent_runs CASCADE');
    const results: AgentRunRecord[] = [];
    const app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'ok' }]))], {
      runStore: store(),
      concurrency: 8,
      onResult: (r) => void results.push(r),
    });
    apps.push(app);
    await app.init();
    const worker = app.get(AgentWorker);
    const posted = await Promise.all(Array.from({ length: 50 }, (_, i) => worker.post(`goal ${i}`, SCOPE)));
    await until(() => results.length === 50, '50 results', 15_000);
    expect(new Set(results.map((r) => r.id))).toEqual(new Set(posted.map((p) => p.runId)));
    const [{ n }] = await dataSource.query(`SELECT count(*) AS n FROM zmodu_agent_runs WHERE status = 'succeeded' AND attempts = 1`);
    expect(Number(n)).toBe(50);
    expect(worker.stats()).toMatchObject({ succeeded: 50, failed: 0, handlerErrors: 0 });
  });

  it('gives running goals shutdownGraceMs, then stores them as interrupted; the next start retries them', async () => {
    await dataSource.query('TRUNCATE zmodu_agent_runs CASCADE');
    const model = new GatedModel();
    const first = await compileWorkerApp([spec(model)], { runStore: store(), concurrency: 1, shutdownGraceMs: 100 });
    await first.init();
    const worker = first.get(AgentWorker);
    const running = await worker.post('quote ACME', SCOPE);
    const waiting = await worker.post('quote GLOBEX', SCOPE);
    await until(() => model.started === 1, 'the first run to start');
    // The grace is a timer of shutdownGraceMs (100 ms): set and run out while the run still waited, then it was aborted.
    const { timers } = await timersDuring(
      () => model.aborted,
      () => first.close(),
    );
    expect(timers).toContainEqual({ ms: 100, whenSet: 0, whenFired: 0 });
    expect(model.aborted).toBe(1);
    expect(worker.stats()).toMatchObject({ interrupted: 1, succeeded: 0, handlerErrors: 0 });
    const interrupted = await store().get('t1', running.runId);
    expect(interrupted).toMatchObject({ status: 'interrupted', attempts: 1, leaseOwner: null });
    expect(interrupted?.error).toMatch(/shutdownGraceMs/);
    expect(await store().get('t1', waiting.runId)).toMatchObject({ status: 'queued', attempts: 0 });

    const results: AgentRunRecord[] = [];
    const second = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'done after restart' }]))], {
      runStore: store(),
      onResult: (r) => void results.push(r),
    });
    apps.push(second);
    await second.init();
    await until(() => results.length === 2, 'both runs after the restart');
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(byId.get(running.runId)).toMatchObject({ status: 'succeeded', attempts: 2, answer: 'done after restart' });
    expect(byId.get(waiting.runId)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('lets a goal that finishes within the grace period finish at shutdown', async () => {
    await dataSource.query('TRUNCATE zmodu_agent_runs CASCADE');
    const model = new GatedModel('finished in time');
    const app = await compileWorkerApp([spec(model)], { runStore: store(), shutdownGraceMs: 5000 });
    await app.init();
    const { runId } = await app.get(AgentWorker).post('quote ACME', SCOPE);
    await until(() => model.started === 1, 'the run to start');
    setTimeout(() => model.open(), 50);
    await app.close();
    expect(await store().get('t1', runId)).toMatchObject({ status: 'succeeded', answer: 'finished in time' });
  });

  it('holds a tenant to its share across two instances: of 50 concurrent posts 10 are stored, another tenant still gets in (attack: one tenant floods the mailbox)', async () => {
    await dataSource.query('TRUNCATE zmodu_agent_runs CASCADE');
    // Two instances on one run store, not started (nothing drains): the share is decided by the store, atomically.
    const options = { runStore: store(), mailboxSize: 1000, mailboxPerTenant: 10 };
    const [a, b] = await Promise.all([
      compileWorkerApp([spec(new GatedModel())], options),
      compileWorkerApp([spec(new GatedModel())], options),
    ]);
    apps.push(a, b);
    const loud = { ...SCOPE, tenantId: 'loud' };
    const posts = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).get(AgentWorker).post(`flood ${i}`, loud)));
    const refused = posts.flatMap((p) => (p.status === 'rejected' ? [p.reason as unknown] : []));
    expect(posts.filter((p) => p.status === 'fulfilled')).toHaveLength(10);
    expect(refused.every((e) => e instanceof MailboxFullException && e.tenantShare === 10 && e.retryAfterSeconds >= 1)).toBe(true);
    const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM zmodu_agent_runs WHERE tenant_id = 'loud'`);
    expect(n).toBe(10);
    await expect(b.get(AgentWorker).post('quiet first goal', { ...SCOPE, tenantId: 'quiet' })).resolves.toEqual({
      runId: expect.any(String),
    });
  });
});
