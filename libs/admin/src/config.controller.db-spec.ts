import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { AgentAuditLog, Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { DataSource } from 'typeorm';
import request from 'supertest';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AdminSkillsFixture, startAdminSkillsApp } from './__fixtures__/admin-skills-app';

const as = (tenant: string, permissions = 'admin:config', user = 'admin') => ({
  'x-test-tenant': tenant,
  'x-test-permissions': permissions,
  'x-test-user': user,
});

describe('GET /admin/config and PUT /admin/config/:key', () => {
  let db: TestDatabase;
  let f: AdminSkillsFixture;
  const http = () => request(f.app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase();
    f = await startAdminSkillsApp(db);
  });

  afterAll(async () => {
    await f?.app.close();
    await db?.drop();
  });

  it("lists the declared keys with the caller's tenant's values, and writes through admin.config.set (audited)", async () => {
    const before = await http().get('/admin/config').set(as('acme')).expect(200);
    expect(before.body.keys.map((k: { key: string }) => k.key)).toEqual([
      'feature.beta',
      'orders.currency',
      'orders.maxDraft',
      'risk.limit',
      'ui.banner',
    ]);
    expect(before.body.keys.find((k: { key: string }) => k.key === 'orders.maxDraft')).toMatchObject({
      value: 5,
      version: 0,
      source: 'default',
      mutable: true,
    });
    const put = await http()
      .put('/admin/config/orders.maxDraft')
      .set(as('acme', 'admin:config', 'carol'))
      .send({ value: 9, expectedVersion: 0 })
      .expect(200);
    expect(put.body).toMatchObject({ key: 'orders.maxDraft', value: 9, version: 1, previous: null, updatedBy: 'carol' });
    const again = await http().put('/admin/config/orders.maxDraft').set(as('acme')).send({ value: 11, expectedVersion: 1 }).expect(200);
    expect(again.body).toMatchObject({ value: 11, version: 2, previous: { value: 9, version: 1 } });
    const after = await http().get('/admin/config').set(as('acme')).expect(200);
    expect(after.body.keys.find((k: { key: string }) => k.key === 'orders.maxDraft')).toMatchObject({
      value: 11,
      version: 2,
      source: 'stored',
    });
    // Another tenant sees its own (the default), never acme's.
    const globex = await http().get('/admin/config').set(as('globex')).expect(200);
    expect(globex.body.keys.find((k: { key: string }) => k.key === 'orders.maxDraft')).toMatchObject({ value: 5, version: 0 });
    // The write went through the dispatcher: its audit entry holds the previous value.
    const audit = await f.app.get(AgentAuditLog).query({ tenantId: 'acme', skill: 'admin.config.set' });
    expect(audit.map((e) => [e.userId, e.outcome, (e.result as { previous: unknown }).previous])).toEqual([
      ['carol', 'ok', null],
      ['admin', 'ok', { value: 9, version: 1 }],
    ]);
  });

  it("keeps a tenant's write to itself, also for tenants named constructor and __proto__", async () => {
    await http().put('/admin/config/feature.beta').set(as('constructor')).send({ value: true }).expect(200);
    await http().put('/admin/config/feature.beta').set(as('__proto__')).send({ value: true, expectedVersion: 0 }).expect(200);
    const acme = await http().get('/admin/config').set(as('acme')).expect(200);
    expect(acme.body.keys.find((k: { key: string }) => k.key === 'feature.beta')).toMatchObject({ value: false, version: 0 });
    const proto = await http().get('/admin/config').set(as('__proto__')).expect(200);
    expect(proto.body.keys.find((k: { key: string }) => k.key === 'feature.beta')).toMatchObject({ value: true, version: 1 });
  });

  it('answers 401 without a caller and 403 without the config permission, and writes nothing', async () => {
    await http().get('/admin/config').expect(401);
    await http().put('/admin/config/orders.maxDraft').send({ value: 1 }).expect(401);
    const list = await http().get('/admin/config').set(as('acme', 'admin:audit')).expect(403);
    expect(list.body.message).toMatch(/admin:config/);
    await http().put('/admin/config/orders.maxDraft').set(as('acme', 'admin:audit')).send({ value: 1 }).expect(403);
    const audit = await f.app.get(AgentAuditLog).query({ tenantId: 'acme', skill: 'admin.config.set' });
    expect(audit).toHaveLength(2);
  });

  it("answers 403 when the caller lacks the skill's own code (AdminSkillsModule permissions.config), and audits the refusal", async () => {
    // An app of its own on a database of its own (an embedded folder is opened by one instance at a time).
    const otherDb = await createTestDatabase();
    const other = await startAdminSkillsApp(otherDb, { permissions: { config: 'ops:config' } });
    try {
      const res = await request(other.app.getHttpServer()).put('/admin/config/risk.limit').set(as('ops-t')).send({ value: 1 }).expect(403);
      expect(res.body.message).toMatch(/ops:config/);
      await request(other.app.getHttpServer())
        .put('/admin/config/risk.limit')
        .set(as('ops-t', 'admin:config,ops:config'))
        .send({ value: 1 })
        .expect(200);
      const audit = await other.app.get(AgentAuditLog).query({ tenantId: 'ops-t', skill: 'admin.config.set' });
      expect(audit.map((e) => e.outcome)).toEqual(['forbidden', 'ok']);
    } finally {
      await other.app.close();
      await otherDb.drop();
    }
  });

  it('answers 400 for a body that is not { value, expectedVersion? } or a value of the wrong type', async () => {
    const bad: unknown[] = [
      [1],
      { expectedVersion: 0 },
      { value: 1, expectedVersion: -1 },
      { value: 1, expectedVersion: 1.5 },
      { value: 1, expectedVersion: '1' },
      { value: 1, tenantId: 'globex' },
    ];
    for (const body of bad) {
      const res = await http()
        .put('/admin/config/orders.maxDraft')
        .set(as('acme'))
        .send(body as object)
        .expect(400);
      expect(res.body.message).toEqual(expect.any(String));
    }
    const typed = await http().put('/admin/config/orders.maxDraft').set(as('acme')).send({ value: 'many' }).expect(400);
    expect(typed.body).toMatchObject({
      message: expect.stringMatching(/does not fit config key 'orders.maxDraft'/),
      problems: [expect.stringMatching(/integer/)],
    });
    const banner = await http()
      .put('/admin/config/ui.banner')
      .set(as('acme'))
      .send({ value: { text: 'hi', level: 'panic' } })
      .expect(400);
    expect(banner.body.problems.length).toBeGreaterThan(0);
    // Text PostgreSQL's jsonb cannot hold (NUL, a lone surrogate, also as a member name): a 400 saying so, not a 500.
    for (const value of [{ text: 'a\u0000b' }, { text: '\ud800x' }, { text: 'ok', ['\u0000']: 1 }]) {
      const res = await http().put('/admin/config/ui.banner').set(as('acme')).send(JSON.stringify({ value })).type('json');
      expect([res.status, res.body.problems]).toEqual([400, [expect.stringMatching(/NUL character or a lone surrogate/)]]);
    }
    await http()
      .put(`/admin/config/${'k'.repeat(200)}`)
      .set(as('acme'))
      .send({ value: 1 })
      .expect(400);
  });

  it('answers 404 for an undeclared key, 403 for a read-only key, 409 for a stale version (with the current one)', async () => {
    for (const key of ['orders.unknown', 'constructor', '__proto__']) {
      const res = await http().put(`/admin/config/${key}`).set(as('acme')).send({ value: 1 }).expect(404);
      expect(res.body.message).toMatch(/not declared/);
    }
    const ro = await http().put('/admin/config/orders.currency').set(as('acme')).send({ value: 'USD' }).expect(403);
    expect(ro.body.message).toMatch(/read-only/);
    await http().put('/admin/config/risk.limit').set(as('acme')).send({ value: 1000 }).expect(200);
    const stale = await http().put('/admin/config/risk.limit').set(as('acme')).send({ value: 5, expectedVersion: 0 }).expect(409);
    expect(stale.body).toMatchObject({ message: expect.stringMatching(/version 1, not 0/), expectedVersion: 0, currentVersion: 1 });
    const current = await http().get('/admin/config').set(as('acme')).expect(200);
    expect(current.body.keys.find((k: { key: string }) => k.key === 'risk.limit')).toMatchObject({ value: 1000, version: 1 });
  });

  it('describes both endpoints in the OpenAPI document (@nestjs/swagger): tag, parameter, body and status codes', () => {
    const doc = SwaggerModule.createDocument(f.app, new DocumentBuilder().setTitle('admin').build());
    const put = doc.paths['/admin/config/{key}']?.put;
    expect(put?.tags).toEqual(['admin']);
    expect(put?.parameters).toEqual([expect.objectContaining({ name: 'key', in: 'path', required: true })]);
    expect(put?.requestBody).toMatchObject({ content: { 'application/json': { schema: { required: ['value'] } } } });
    expect(Object.keys(put?.responses ?? {}).sort()).toEqual(['200', '400', '401', '403', '404', '409', '503']);
    const get = doc.paths['/admin/config']?.get;
    expect(get?.tags).toEqual(['admin']);
    expect(Object.keys(get?.responses ?? {}).sort()).toEqual(['200', '401', '403']);
  });

  it('lets exactly one of ten concurrent PUTs bound to the same version land; the others get 409 and write nothing', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        http()
          .put('/admin/config/feature.beta')
          .set(as('race', 'admin:config', `u${i}`))
          .send({ value: i % 2 === 0, expectedVersion: 0 }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 200)!;
    const read = await http().get('/admin/config').set(as('race')).expect(200);
    expect(read.body.keys.find((k: { key: string }) => k.key === 'feature.beta')).toMatchObject({
      version: 1,
      value: winner.body.value,
      updatedBy: winner.body.updatedBy,
    });
  });

  it('answers 503 with Retry-After (not 500) when the config store cannot be reached, and the skill says so too', async () => {
    const ownDb = await createTestDatabase();
    const own = await startAdminSkillsApp(ownDb);
    try {
      await own.app.get(DataSource).destroy();
      const res = await request(own.app.getHttpServer())
        .put('/admin/config/orders.maxDraft')
        .set(as('acme'))
        .send({ value: 3 })
        .expect(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body.message).toMatch(/config store cannot be reached/);
      const ctx = createSkillContext({
        guard: new Guard({ allow: ['admin.config.get'] }),
        tenantId: 'acme',
        permissions: ['admin:config'],
      });
      const read = await own.app.get(SkillDispatcher).dispatch(ctx, 'admin.config.get', { key: 'orders.maxDraft' });
      expect(read.error).toMatchObject({ reason: 'config_store_unavailable' });
    } finally {
      // Its audit entries cannot be written at close: the database is gone.
      await own.app.close().catch(() => undefined);
      await ownDb.drop();
    }
  });
});
