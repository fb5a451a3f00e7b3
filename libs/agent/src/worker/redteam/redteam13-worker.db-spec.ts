import { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { ScriptedModelProvider } from '../../providers/scripted-model.provider';
import { compileWorkerApp, SCOPE, spec } from '../__fixtures__/worker-fixtures';
import { ZMODU_AGENT_MIGRATIONS } from '../agent-run.migration';
import { AgentWorker } from '../agent-worker';
import { TypeOrmAgentRunStore } from '../typeorm-agent-run.store';

describe('red team 13: AgentWorker on TypeOrmAgentRunStore', () => {
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

  it("RT-W4 one post with a NUL goal does not fail another tenant's post batched in the same tick", async () => {
    const app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'x' }, { text: 'y' }]))], {
      runStore: new TypeOrmAgentRunStore(dataSource),
    });
    apps.push(app);
    const worker = app.get(AgentWorker);
    const [bad, good] = await Promise.allSettled([
      worker.post('quote\u0000ACME', SCOPE),
      worker.post('quote GLOBEX', { ...SCOPE, tenantId: 'other-tenant' }),
    ]);
    expect(good.status).toBe('fulfilled');
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason?.constructor?.name).toBe('InvalidGoalException');
  });

  it('RT-W5 get: tenant-scoped, odd ids and tenants answer null, never throw', async () => {
    const store = new TypeOrmAgentRunStore(dataSource);
    await store.insert([{ id: 'r-1', agent: 'trader', goal: 'g', tenantId: '__proto__', userId: 'u', permissions: [], maxAttempts: 1 }]);
    expect(await store.get('__proto__', 'r-1')).toMatchObject({ id: 'r-1' });
    expect(await store.get('constructor', 'r-1')).toBeNull();
    for (const [t, id] of [
      ['__proto__', 'r-1\u0000'],
      ['t\u0000', 'r-1'],
      ['__proto__', 'x'.repeat(100_000)],
    ])
      await expect(store.get(t, id)).resolves.toBeNull();
  });

  it('RT-W6 a run is claimed once under concurrent delivery from two instances', async () => {
    const a = new TypeOrmAgentRunStore(dataSource);
    const b = new TypeOrmAgentRunStore(dataSource);
    await a.insert([{ id: 'r-claim', agent: 'trader', goal: 'g', tenantId: 't', userId: 'u', permissions: [], maxAttempts: 3 }]);
    const claims = await Promise.all([a.claim('r-claim', 'A', 10_000), b.claim('r-claim', 'B', 10_000), a.claim('r-claim', 'C', 10_000)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
  });
});
