import { INestApplication } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule, TokenQuota, TokenQuotaStore, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { InMemoryTokenQuotaStore, TOKEN_QUOTA_STORE } from '@zmodu/guard/internal';
import request from 'supertest';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { as, startAdminApp } from './__fixtures__/admin-fixtures';

describe('GET /admin/quota', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let today: string;
  const get = (path: string, tenant = 'acme', ...permissions: string[]) =>
    request(app.getHttpServer())
      .get(path)
      .set(as(tenant, ...(permissions.length ? permissions : ['admin:quota'])));

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startAdminApp(
      [
        TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_GUARD_MIGRATIONS, migrationsRun: true })),
        GuardModule.forRoot({ auditStore: 'memory', quota: { userShare: 0.5 } }),
      ],
      { quota: true },
    );
    const quota = app.get(TokenQuota);
    today = quota.currentPeriod();
    quota.setAgentLimit('trader', 1000);
    await quota.charge({ tenantId: 'acme', agent: 'trader', userId: 'alice' }, 120);
    await quota.charge({ tenantId: 'acme', agent: 'trader', userId: 'bob' }, 300);
    await quota.charge({ tenantId: 'acme', agent: 'analyst' }, 40);
    await quota.charge({ tenantId: 'globex', agent: 'trader', userId: 'carol' }, 999);
    await app.get<TokenQuotaStore>(TOKEN_QUOTA_STORE).charge({ tenantId: 'acme', agent: 'trader' }, '2020-01-01', 7);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers 401 without a caller and 403 without admin:quota', async () => {
    await request(app.getHttpServer()).get('/admin/quota').expect(401);
    const denied = await get('/admin/quota', 'acme', 'admin:agents').expect(403);
    expect(denied.body.message).toBe('Missing permission: admin:quota.');
  });

  it("answers the caller's tenant's usage this period per agent, with the users, the limits and what remains", async () => {
    const res = await get('/admin/quota').expect(200);
    expect(res.body).toEqual({
      tenantId: 'acme',
      currentPeriod: today,
      items: [
        { agent: 'analyst', period: today, tokens: 40, limit: null, remaining: null, userLimit: null, users: [] },
        {
          agent: 'trader',
          period: today,
          tokens: 420,
          limit: 1000,
          remaining: 580,
          userLimit: 500,
          users: [
            { userId: 'bob', tokens: 300 },
            { userId: 'alice', tokens: 120 },
          ],
        },
      ],
    });
  });

  it('shows a tenant admin its own tenant only: ?tenant= naming another is a 403', async () => {
    const globex = await get('/admin/quota', 'globex').expect(200);
    expect(globex.body.items).toEqual([
      { agent: 'trader', period: today, tokens: 999, limit: 1000, remaining: 1, userLimit: 500, users: [{ userId: 'carol', tokens: 999 }] },
    ]);
    const other = await get('/admin/quota?tenant=globex').expect(403);
    expect(other.body.message).toMatch(/only the token usage of its own tenant/);
    await get('/admin/quota?tenant=globex&tenant=acme').expect(403);
    expect((await get('/admin/quota?tenant=acme').expect(200)).body.tenantId).toBe('acme');
  });

  it('filters by agent and period (or every period), and caps the rows', async () => {
    const all = await get('/admin/quota?period=all&agent=trader').expect(200);
    expect(all.body.items.map((i: { period: string; tokens: number }) => [i.period, i.tokens])).toEqual([
      [today, 420],
      ['2020-01-01', 7],
    ]);
    const old = await get('/admin/quota?period=2020-01-01').expect(200);
    expect(old.body.items).toMatchObject([{ agent: 'trader', period: '2020-01-01', tokens: 7, users: [] }]);
    expect((await get('/admin/quota?period=2020-01').expect(200)).body.items).toEqual([]);
    expect((await get('/admin/quota?period=all&limit=1').expect(200)).body.items.map((i: { agent: string }) => i.agent)).toEqual([
      'analyst',
    ]);
  });

  it('answers a bad parameter with a 400 naming it, never a 500', async () => {
    for (const [query, field] of [
      ['period=yesterday', 'period'],
      ['period=2026-1', 'period'],
      ['period=all&period=total', 'period'],
      ['agent=', 'agent'],
      ['agent=%20', 'agent'],
      ['agent=a&agent=b', 'agent'],
      [`agent=${'a'.repeat(201)}`, 'agent'],
      ['agent=tra%00der', 'agent'],
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=1&limit=2', 'limit'],
    ]) {
      const res = await get(`/admin/quota?${query}`);
      expect([query, res.status, res.body.field]).toEqual([query, 400, field]);
      expect(res.body.message).toMatch(new RegExp(`^${field} must`));
    }
  });

  it('answers 501 with what to do when the quota store cannot list its counters', async () => {
    const memory = new InMemoryTokenQuotaStore();
    const plain: TokenQuotaStore = { used: (k, p) => memory.used(k, p), charge: (k, p, t) => memory.charge(k, p, t) };
    const other = await startAdminApp([GuardModule.forRoot({ auditStore: 'memory', quotaStore: plain })], { quota: true });
    try {
      const res = await request(other.getHttpServer()).get('/admin/quota').set(as('acme', 'admin:quota')).expect(501);
      expect(res.body.message).toMatch(/cannot list its counters.*TypeORM or in-memory/);
    } finally {
      await other.close();
    }
  });
});
