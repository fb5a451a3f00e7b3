import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { INestApplication } from '@nestjs/common';
import { ProposalPipeline } from '@zmodu/pipeline';
import request from 'supertest';
import { OwnServerApp, POSTGRES_SCRIPT, sampleOnOwnServer, stopOwnServer } from '../support/own-postgres';
import { DataSource } from 'typeorm';
import { mintToken } from '../../apps/sample/src/auth/dev-token';

const SECRET = 'chaos-secret-that-is-long-enough-for-hs256-0123456789';
const script = POSTGRES_SCRIPT;
const N = 8;
const run = promisify(execFile);

/**
 * The chaos suite (npm run test:chaos): PostgreSQL restarted while approvers decide a batch of proposals. Every answer is
 * a decision or a 503 with Retry-After (never a 500: before ListeningPgClient, a client cut while idle emitted an
 * unhandled 'error' that Node threw into a request); once the server is back, every proposal is executed exactly once.
 */
describe('chaos: PostgreSQL restarted in the middle of approvals', () => {
  let own: OwnServerApp | undefined;
  let app: INestApplication;
  let dir: string;

  beforeAll(async () => {
    own = await sampleOnOwnServer(SECRET);
    ({ app, dir } = own);
  }, 120_000);

  afterAll(async () => {
    await stopOwnServer(own);
  });

  it('every approval answers a decision or a 503, and every proposal executes exactly once after the restart', async () => {
    const pipeline = app.get(ProposalPipeline);
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const out = await pipeline.submit(
        { tenantId: 'acme', userId: 'alice', permissions: ['order:submit'], agent: 'desk' },
        { action: 'order.submit', payload: { symbol: 'GLOBEX', side: 'buy', qty: 500 + i, limitPrice: 48.1 } },
      );
      expect(out.verdict).toBe('needs_human');
      ids.push(out.proposalId as string);
    }
    const lead = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] })}`;
    const approve = (id: string) =>
      request(app.getHttpServer())
        .post(`/admin/approvals/${id}/approve`)
        .set('Authorization', lead)
        .send({ reason: 'chaos', version: 1, step: 0 })
        .timeout({ deadline: 30_000 });
    // Every approval at once; the server goes down while they are in flight (fast shutdown: connections cut, open
    // transactions rolled back) and comes back a second later.
    const restart = (async () => {
      await new Promise((r) => setTimeout(r, 15));
      await run(script, ['pause', dir]);
      await new Promise((r) => setTimeout(r, 1000));
      await run(script, ['resume', dir]);
    })();
    const answers = await Promise.all(ids.map(approve));
    await restart;
    for (const res of answers) {
      expect([res.status, res.status === 500 ? res.text : '']).not.toEqual([500, expect.anything()]);
      if (res.status === 503) expect(res.headers['retry-after']).toBeDefined();
    }
    let ready = 0;
    for (let i = 0; i < 50 && ready !== 200; i++) {
      ready = (await request(app.getHttpServer()).get('/health/ready')).status;
      if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ready).toBe(200);
    // Decide again what the outage refused, from what is stored now (a decision that committed is not made twice).
    for (const [k, res] of answers.entries()) {
      if (res.status === 200) continue;
      const now = await pipeline.get('acme', ids[k]);
      if (now.status === 'pending') expect((await approve(ids[k])).status).toBe(200);
    }
    await pipeline.recover();
    const ds = app.get(DataSource);
    for (const [i, id] of ids.entries()) {
      expect((await pipeline.get('acme', id)).status).toBe('executed');
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM sample_orders WHERE tenant_id = 'acme' AND qty = $1`, [500 + i]);
      expect([id, n]).toEqual([id, 1]);
    }
  });
});
