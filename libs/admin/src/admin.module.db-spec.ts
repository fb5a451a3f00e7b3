import { ArgumentsHost, Catch, ExceptionFilter, HttpException, INestApplication, Injectable, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { OutboxRelay } from '@zmodu/outbox/internal';
import { OutboxService } from '@zmodu/outbox';
import type { Response } from 'express';
import request from 'supertest';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AdminModule } from './admin.module';
import { AdminCaller } from './admin.options';
import { outboxTestImports } from './__fixtures__/outbox-imports';

/** The application's configuration, from a module of its own: what forRootAsync's factory reads. */
@Injectable()
class AdminConfig {
  readonly outboxPermission = 'ops:outbox';
  caller(req: unknown): AdminCaller | undefined {
    const h = (req as { headers: Record<string, string | undefined> }).headers;
    return h['x-test-tenant']
      ? { tenantId: h['x-test-tenant'], userId: 'admin', permissions: (h['x-test-permissions'] ?? '').split(',') }
      : undefined;
  }
}

@Module({ providers: [AdminConfig], exports: [AdminConfig] })
class AdminConfigModule {}

/** A catch-all global filter like an application's edge filter: HttpExceptions keep their answer, anything else is a 500. */
@Catch()
class CatchAllFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (exception instanceof HttpException) res.status(exception.getStatus()).json(exception.getResponse());
    else res.status(500).json({ statusCode: 500, message: 'Internal error' });
  }
}

describe('AdminModule.forRootAsync, under an application filter', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let deadId: string;
  const as = (permissions: string) => ({ 'x-test-tenant': 'acme', 'x-test-permissions': permissions });

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...(await outboxTestImports(db)),
        AdminModule.forRootAsync({
          approvals: false,
          outbox: true,
          imports: [AdminConfigModule],
          inject: [AdminConfig],
          useFactory: (config: AdminConfig) => ({ outboxPermission: config.outboxPermission, resolveCaller: (req) => config.caller(req) }),
        }),
      ],
      providers: [{ provide: APP_FILTER, useClass: CatchAllFilter }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
    deadId = await app.get(OutboxService).publish({ tenantId: 'acme', topic: 'always.fails', payload: {}, maxAttempts: 1 });
    await app.get(OutboxRelay).runOnce();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('takes its options from the factory: the permission it injected is the one required', async () => {
    const forbidden = await request(app.getHttpServer()).get('/admin/outbox').set(as('admin:outbox')).expect(403);
    expect(forbidden.body.message).toBe('Missing permission: ops:outbox.');
    await request(app.getHttpServer()).get('/admin/outbox?status=dead').set(as('ops:outbox')).expect(200);
    await request(app.getHttpServer()).get('/admin/outbox').expect(401);
  });

  it('answers 401 naming the problem for a caller whose tenant id only looks like one (attack: acme\\u00ad, a soft hyphen)', async () => {
    const refused = await request(app.getHttpServer())
      .get('/admin/outbox?status=dead')
      .set({ 'x-test-tenant': 'acme\u00ad', 'x-test-permissions': 'ops:outbox' })
      .expect(401);
    expect(refused.body.message).toMatch(/^Unauthorized: tenantId holds U\+00AD, a character that shows as nothing/);
    const blank = await request(app.getHttpServer())
      .get('/admin/outbox?status=dead')
      .set({ 'x-test-tenant': 'acme\u00a0', 'x-test-permissions': 'ops:outbox' })
      .expect(401);
    expect(blank.body.message).toMatch(/tenantId begins or ends with a blank/);
  });

  it('serves only the endpoints its extras name', async () => {
    await request(app.getHttpServer()).get('/admin/approvals').set(as('approval:decide')).expect(404);
  });

  it('a library exception keeps its status code when the application has a catch-all filter', async () => {
    await request(app.getHttpServer()).post(`/admin/outbox/${deadId}/retry`).set(as('ops:outbox')).expect(200);
    const conflict = await request(app.getHttpServer()).post(`/admin/outbox/${deadId}/retry`).set(as('ops:outbox')).expect(409);
    expect(conflict.body).toEqual({
      statusCode: 409,
      code: 'OutboxConflictException',
      message: `Event ${deadId} is pending, not dead: only a dead-lettered event can be retried.`,
      eventId: deadId,
      status: 'pending',
    });
  });

  it('parses the id and the query before the handler runs: a 400 names the parameter', async () => {
    expect((await request(app.getHttpServer()).post('/admin/outbox/x/retry').set(as('ops:outbox')).expect(400)).body).toEqual({
      message: 'id must be a UUID',
      field: 'id',
    });
    expect((await request(app.getHttpServer()).get('/admin/outbox?limit=101').set(as('ops:outbox')).expect(400)).body.field).toBe('limit');
  });
});
