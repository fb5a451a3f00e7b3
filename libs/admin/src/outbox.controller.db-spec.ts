import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OutboxRelay } from '@zmodu/outbox/internal';
import { OutboxService } from '@zmodu/outbox';
import request from 'supertest';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AdminModule } from './admin.module';
import { outboxTestImports } from './__fixtures__/outbox-imports';

describe('admin outbox endpoints', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let deadId: string;
  const as = (tenant: string, permissions = 'admin:outbox') => ({
    'x-test-tenant': tenant,
    'x-test-user': 'admin',
    'x-test-permissions': permissions,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...(await outboxTestImports(db)),
        AdminModule.forRoot({
          approvals: false,
          outbox: true,
          // In these tests the caller comes from headers; an application reads its verified token.
          resolveCaller: (req) => {
            const h = (req as { headers: Record<string, string | undefined> }).headers;
            return h['x-test-tenant']
              ? { tenantId: h['x-test-tenant'], userId: h['x-test-user'] ?? 'x', permissions: (h['x-test-permissions'] ?? '').split(',') }
              : undefined;
          },
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
    deadId = await app.get(OutboxService).publish({ tenantId: 'acme', topic: 'always.fails', payload: { a: 1 }, maxAttempts: 1 });
    await app.get(OutboxRelay).runOnce();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('lists dead-lettered events of the caller tenant only', async () => {
    const mine = await request(app.getHttpServer()).get('/admin/outbox?status=dead').set(as('acme')).expect(200);
    expect(mine.body.items).toEqual([expect.objectContaining({ id: deadId, status: 'dead', lastError: 'the receiver refused it' })]);
    const theirs = await request(app.getHttpServer()).get('/admin/outbox?status=dead').set(as('globex')).expect(200);
    expect(theirs.body.total).toBe(0);
    await request(app.getHttpServer()).get(`/admin/outbox/${deadId}`).set(as('globex')).expect(404);
  });

  it('retries a dead event once; a second retry is 409; another tenant gets 404', async () => {
    await request(app.getHttpServer()).post(`/admin/outbox/${deadId}/retry`).set(as('globex')).expect(404);
    const retried = await request(app.getHttpServer()).post(`/admin/outbox/${deadId}/retry`).set(as('acme')).expect(200);
    expect(retried.body).toMatchObject({ id: deadId, status: 'pending', attempts: 0 });
    await request(app.getHttpServer()).post(`/admin/outbox/${deadId}/retry`).set(as('acme')).expect(409);
  });

  it('answers 401, 403 and 400 with what is wrong', async () => {
    await request(app.getHttpServer()).get('/admin/outbox').expect(401);
    const forbidden = await request(app.getHttpServer()).get('/admin/outbox').set(as('acme', 'approval:decide')).expect(403);
    expect(forbidden.body.message).toMatch(/admin:outbox/);
    const badId = await request(app.getHttpServer()).get('/admin/outbox/nope').set(as('acme')).expect(400);
    expect(badId.body.field).toBe('id');
    const badStatus = await request(app.getHttpServer()).get('/admin/outbox?status=lost').set(as('acme')).expect(400);
    expect(badStatus.body.field).toBe('status');
  });
});
