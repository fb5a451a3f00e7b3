import { execFileSync } from 'node:child_process';
import { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { POSTGRES_SCRIPT, sampleOnOwnServerForSuite } from './support/own-postgres';
import { PERMISSIONS } from '../apps/sample/src/auth/auth.constants';
import { mintToken } from '../apps/sample/src/auth/dev-token';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const script = POSTGRES_SCRIPT;

/**
 * A database outage: the sample runs on a PostgreSQL server of its own, which the test stops and
 * starts again. Readiness says so (503 with Retry-After), liveness does not, and the service resumes.
 */
describe('sample app during a database outage', () => {
  let app: INestApplication;
  let dir: string;
  const token = () => mintToken(SECRET, { tenant: 'acme', user: 'alice' });

  sampleOnOwnServerForSuite(SECRET, (own) => ({ app, dir } = own));

  it('readiness answers 200 while the database answers, 503 with Retry-After while it is away (liveness stays 200), and 200 again when it returns', async () => {
    const ready = await request(app.getHttpServer()).get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } });
    expect(ready.headers['retry-after']).toBeUndefined();
    expect(
      (
        await request(app.getHttpServer())
          .post('/agents/analyst/runs')
          .set('Authorization', `Bearer ${token()}`)
          .send({ goal: 'count orders' })
      ).status,
    ).toBe(200);

    execFileSync(script, ['pause', dir]);
    try {
      const down = await request(app.getHttpServer()).get('/health/ready');
      expect(down.status).toBe(503);
      expect(down.headers['retry-after']).toBe('5');
      expect(down.body).toMatchObject({ status: 'error', error: { database: { status: 'down' } } });
      expect((await request(app.getHttpServer()).get('/health')).status).toBe(200);
      // Every database-backed endpoint says 503 with Retry-After, never a bare 500 or a made-up answer.
      const lead = mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide'] });
      const queue = await request(app.getHttpServer()).get('/admin/approvals').set('Authorization', `Bearer ${lead}`);
      expect(queue.status).toBe(503);
      expect(queue.headers['retry-after']).toBe('5');
      // The admin endpoints too, also a config write (which runs the admin.config.set skill through the dispatcher).
      const admin = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'ada', permissions: [PERMISSIONS.adminConfig, PERMISSIONS.adminAudit] })}`;
      for (const [method, path] of [
        ['get', '/admin/config'],
        ['put', '/admin/config/orders.maxDraftQuantity'],
        ['get', '/admin/audit'],
        ['get', '/admin/audit/verify'],
      ] as const) {
        const res = await request(app.getHttpServer())
          [method](path)
          .set('Authorization', admin)
          .send(method === 'put' ? { value: 5 } : undefined);
        expect([method, path, res.status, res.headers['retry-after']]).toEqual([method, path, 503, '5']);
      }
      // The trader has a tenant quota: it cannot be read, so the run is an outage (not "budget exhausted").
      const run = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', `Bearer ${token()}`)
        .send({ goal: 'buy 1 ACME' });
      expect(run.status).toBe(503);
      expect(run.headers['retry-after']).toBe('5');
      expect(JSON.stringify(run.body)).not.toMatch(/budget_exhausted/);
      // The analyst has no quota to read: its tools fail, and it says so instead of claiming an answer.
      const analyst = await request(app.getHttpServer())
        .post('/agents/analyst/runs')
        .set('Authorization', `Bearer ${token()}`)
        .send({ goal: 'count orders' });
      expect(analyst.status).toBe(200);
      expect(analyst.body.answer).toMatch(/^Could not read the desk orders/);
    } finally {
      execFileSync(script, ['resume', dir]);
    }

    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await request(app.getHttpServer()).get('/health/ready')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    expect(
      (
        await request(app.getHttpServer())
          .post('/agents/analyst/runs')
          .set('Authorization', `Bearer ${token()}`)
          .send({ goal: 'count orders' })
      ).status,
    ).toBe(200);
  }, 120_000);
});
