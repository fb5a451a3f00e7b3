import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AgentAuditLog, AuditEntry, AuditLogStore, GuardModule, ZMODU_GUARD_ENTITIES, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { sampleAuditEntry } from '@zmodu/guard/testing';
import request from 'supertest';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AdminModule } from './admin.module';

const callerFromHeaders = (req: unknown) => {
  const h = (req as { headers: Record<string, string | undefined> }).headers;
  return h['x-test-tenant']
    ? { tenantId: h['x-test-tenant'], userId: 'admin', permissions: (h['x-test-permissions'] ?? '').split(',') }
    : undefined;
};
const as = (tenant: string, permissions = 'admin:audit') => ({ 'x-test-tenant': tenant, 'x-test-permissions': permissions });

async function startApp(imports: NonNullable<Parameters<typeof Test.createTestingModule>[0]['imports']>): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [...imports, AdminModule.forRoot({ approvals: false, audit: true, resolveCaller: callerFromHeaders })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return app;
}

describe('GET /admin/audit/verify', () => {
  let db: TestDatabase;
  let app: INestApplication;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp([
      TypeOrmModule.forRoot(await db.options({ entities: ZMODU_GUARD_ENTITIES, migrations: ZMODU_GUARD_MIGRATIONS, migrationsRun: true })),
      GuardModule.forRoot({ quotaStore: 'memory' }),
    ]);
    const log = app.get(AgentAuditLog);
    for (let i = 0; i < 6; i++) log.record(sampleAuditEntry(`r${i}`, { tenantId: i % 3 ? 'acme' : 'globex' }));
    await log.flush();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it("verifies the caller's tenant only, and finds an altered entry by its sequence number", async () => {
    const acme = await request(app.getHttpServer()).get('/admin/audit/verify').set(as('acme')).expect(200);
    expect(acme.body).toEqual({ ok: true, entries: 4, head: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const named = await request(app.getHttpServer()).get('/admin/audit/verify?tenant=globex').set(as('globex')).expect(200);
    expect(named.body).toMatchObject({ ok: true, entries: 2 });
    await app.get(DataSource).query(`UPDATE zmodu_audit_log SET tokens = 0 WHERE tenant_id = 'acme' AND seq = 2`);
    const altered = await request(app.getHttpServer()).get('/admin/audit/verify').set(as('acme')).expect(200);
    expect(altered.body).toEqual({ ok: false, firstBadSequence: 2, problem: 'altered' });
    expect((await request(app.getHttpServer()).get('/admin/audit/verify').set(as('globex')).expect(200)).body).toMatchObject({ ok: true });
  });

  it("answers 403 for another tenant's chain or without admin:audit, 401 without a caller", async () => {
    const other = await request(app.getHttpServer()).get('/admin/audit/verify?tenant=acme').set(as('globex')).expect(403);
    expect(other.body.message).toMatch(/only the audit of its own tenant/);
    const denied = await request(app.getHttpServer()).get('/admin/audit/verify').set(as('acme', 'admin:outbox')).expect(403);
    expect(denied.body.message).toMatch(/admin:audit/);
    await request(app.getHttpServer()).get('/admin/audit/verify').expect(401);
  });

  it('answers 501 with what to do when the audit store keeps no chain', async () => {
    const plain: AuditLogStore = { append: async (_: readonly AuditEntry[]) => undefined, query: async () => [] };
    const other = await startApp([GuardModule.forRoot({ auditStore: plain, quotaStore: 'memory' })]);
    try {
      const res = await request(other.getHttpServer()).get('/admin/audit/verify').set(as('acme')).expect(501);
      expect(res.body.message).toMatch(/keeps no hash chain.*TypeORM or in-memory/);
    } finally {
      await other.close();
    }
  });
});
