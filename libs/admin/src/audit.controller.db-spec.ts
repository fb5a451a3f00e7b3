import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AgentAuditLog, AuditEntry, AuditLogStore, GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { AUDIT_LOG_STORE } from '@zmodu/guard/internal';
import { sampleAuditEntry } from '@zmodu/guard/testing';
import request from 'supertest';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AdminModule } from './admin.module';
import { AUDIT_CSV_COLUMNS } from './audit/audit-export';

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

/** The app on `db` with the TypeORM audit store (hash-chained). */
async function startAppOnDatabase(db: TestDatabase): Promise<INestApplication> {
  return startApp([
    TypeOrmModule.forRoot(await db.options({ migrations: ZMODU_GUARD_MIGRATIONS, migrationsRun: true })),
    GuardModule.forRoot({ quotaStore: 'memory' }),
  ]);
}

describe('GET /admin/audit/verify', () => {
  let db: TestDatabase;
  let app: INestApplication;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startAppOnDatabase(db);
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

describe('GET /admin/audit', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let acmeIds: string[];
  const get = (path: string, tenant = 'acme') => request(app.getHttpServer()).get(path).set(as(tenant));

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startAppOnDatabase(db);
    const log = app.get(AgentAuditLog);
    const at = (minute: number) => new Date(Date.UTC(2026, 11, 1, 8, minute));
    log.record(sampleAuditEntry('r1', { at: at(0), args: { symbol: 'ACME' }, result: { price: 101.5 } }));
    log.record(
      sampleAuditEntry('r1', {
        at: at(1),
        skill: 'order.submit',
        action: 'execute',
        decision: 'denied',
        cause: 'denied_execute_class',
        outcome: 'denied',
        args: { symbol: 'ACME', note: '=HYPERLINK("x")' },
      }),
    );
    log.record(sampleAuditEntry('r2', { at: at(2), agent: 'analyst', outcome: 'error' }));
    log.record(sampleAuditEntry('r3', { at: at(3), tenantId: 'globex', args: { symbol: 'GLOBEX' } }));
    log.record(sampleAuditEntry('r2', { at: at(4), agent: 'analyst', userId: 'bob' }));
    await log.flush();
    acmeIds = (await app.get<AuditLogStore>(AUDIT_LOG_STORE).query({ tenantId: 'acme' })).map((r) => r.id);
    expect(acmeIds).toHaveLength(4);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers 401 without a caller and 403 without admin:audit', async () => {
    await request(app.getHttpServer()).get('/admin/audit').expect(401);
    const denied = await request(app.getHttpServer()).get('/admin/audit').set(as('acme', 'admin:quota')).expect(403);
    expect(denied.body.message).toBe('Missing permission: admin:audit.');
  });

  it("answers the caller's tenant's entries as JSON, oldest first, with their arguments and results", async () => {
    const res = await get('/admin/audit').expect(200).expect('content-type', /json/);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.entries.map((e: { id: string }) => e.id)).toEqual(acmeIds);
    expect(res.body.entries[0]).toEqual({
      id: acmeIds[0],
      at: '2026-12-01T08:00:00.000Z',
      tenantId: 'acme',
      userId: 'u',
      agent: 'trader',
      runId: 'r1',
      skill: 'market.quote',
      action: 'read',
      decision: 'allowed',
      cause: null,
      outcome: 'ok',
      durationMs: 1,
      tokens: 2,
      proposalId: null,
      approvers: null,
      args: { symbol: 'ACME' },
      result: { price: 101.5 },
    });
    const globex = await get('/admin/audit', 'globex').expect(200);
    expect(globex.body.entries).toMatchObject([{ tenantId: 'globex', runId: 'r3', args: { symbol: 'GLOBEX' } }]);
  });

  it('filters by kind, decision, skill, agent, run, user and time', async () => {
    const runs = async (query: string) =>
      (await get(`/admin/audit?${query}`).expect(200)).body.entries.map((e: { runId: string }) => e.runId);
    expect(await runs('kind=denied')).toEqual(['r1']);
    expect(await runs('kind=error')).toEqual(['r2']);
    expect(await runs('decision=allowed')).toEqual(['r1', 'r2', 'r2']);
    expect(await runs('skill=order.submit')).toEqual(['r1']);
    expect(await runs('agent=analyst')).toEqual(['r2', 'r2']);
    expect(await runs('run=r1')).toEqual(['r1', 'r1']);
    expect(await runs('user=bob')).toEqual(['r2']);
    expect(await runs('since=2026-12-01T08:01:00Z&until=2026-12-01T08:02:00Z')).toEqual(['r1', 'r2']);
    expect(await runs('since=2026-12-02')).toEqual([]);
  });

  it('pages with limit and the next cursor, neither skipping nor repeating an entry', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 5; pages++) {
      const res: request.Response = await get(`/admin/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`).expect(200);
      seen.push(...res.body.entries.map((e: { id: string }) => e.id));
      cursor = res.body.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(acmeIds);
    const first = await get('/admin/audit?limit=3').expect(200);
    expect(first.body.nextCursor).toBe(acmeIds[2]);
    expect((await get('/admin/audit?cursor=9223372036854775807').expect(200)).body).toEqual({ entries: [], nextCursor: null });
  });

  it('answers CSV for format=csv or Accept: text/csv, as an attachment, with the next cursor in X-Next-Cursor', async () => {
    const csv = await get('/admin/audit?format=csv&limit=2').expect(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="audit-acme-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(csv.headers['x-next-cursor']).toBe(acmeIds[1]);
    const lines = csv.text.split('\r\n');
    expect(lines[0]).toBe(AUDIT_CSV_COLUMNS.map((c) => `"${c}"`).join(','));
    expect(lines).toHaveLength(4); // header, two rows, the empty string after the last CRLF
    expect(lines[1]).toContain(',"r1","market.quote","read","allowed",,"ok","1","2",,,"{""symbol"":""ACME""}","{""price"":101.5}"');
    expect(lines[2]).toContain(`"{""symbol"":""ACME"",""note"":""=HYPERLINK(\\""x\\"")""}"`);

    const accepted = await get('/admin/audit').set('Accept', 'text/csv').expect(200);
    expect(accepted.headers['content-type']).toMatch(/^text\/csv/);
    expect(accepted.headers['x-next-cursor']).toBeUndefined();
    expect(accepted.text.split('\r\n')).toHaveLength(6);
    const json = await get('/admin/audit?format=json').set('Accept', 'text/csv').expect(200);
    expect(json.body.entries).toHaveLength(4);
  });

  it("refuses another tenant's audit with a 403, and a bad filter with a 400 naming it, never a 500", async () => {
    const other = await get('/admin/audit?tenant=globex').expect(403);
    expect(other.body.message).toMatch(/only the audit of its own tenant/);
    expect((await get('/admin/audit?tenant=acme').expect(200)).body.entries).toHaveLength(4);
    for (const [query, field] of [
      ['kind=bogus', 'kind'],
      ['decision=maybe', 'decision'],
      ['since=yesterday', 'since'],
      ['until=2026-13-45', 'until'],
      ['since=2026-12-02&until=2026-12-01', 'since'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=abc', 'cursor'],
      ['cursor=9999999999999999999', 'cursor'],
      ['format=xml', 'format'],
      ['skill=a&skill=b', 'skill'],
      [`agent=${'a'.repeat(201)}`, 'agent'],
      ['run=r%001', 'run'],
      ['tenantId=globex', 'tenantId'],
    ]) {
      const res = await get(`/admin/audit?${query}`);
      expect([query, res.status, res.body.field]).toEqual([query, 400, field]);
      expect(typeof res.body.message).toBe('string');
    }
  });
});
