import { INestApplication } from '@nestjs/common';
import { ProposalPipeline } from '@zmodu/pipeline';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { pausePostgres, resumePostgres, sampleOnOwnServerForSuite } from '../support/own-postgres';
import { CHAOS_SECRET as SECRET, sleep } from '../support/sample-process';
import { mintToken } from '../../apps/sample/src/auth/dev-token';

const N = 8;

/**
 * The chaos suite (npm run test:chaos): PostgreSQL restarted while approvers decide a batch of proposals. Every answer is
 * a decision or a 503 with Retry-After (never a 500: a client cut while idle emitted an unhandled 'error' that Node
 * threw into a request, and a transaction whose connection was cut failed its COMMIT with TypeORM's
 * QueryRunnerAlreadyReleasedError); once the server is back, every proposal is executed exactly once.
 */
describe('chaos: PostgreSQL restarted in the middle of approvals', () => {
  let app: INestApplication;
  let dir: string;

  sampleOnOwnServerForSuite(SECRET, (own) => ({ app, dir } = own));

  const lead = () => `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] })}`;
  const approve = (id: string) =>
    request(app.getHttpServer())
      .post(`/admin/approvals/${id}/approve`)
      .set('Authorization', lead())
      .send({ reason: 'chaos', version: 1, step: 0 })
      .timeout({ deadline: 30_000 });

  async function submit(qtys: number[]): Promise<string[]> {
    const pipeline = app.get(ProposalPipeline);
    const ids: string[] = [];
    for (const qty of qtys) {
      const out = await pipeline.submit(
        { tenantId: 'acme', userId: 'alice', permissions: ['order:submit'], agent: 'desk' },
        { action: 'order.submit', payload: { symbol: 'GLOBEX', side: 'buy', qty, limitPrice: 48.1 } },
      );
      expect(out.verdict).toBe('needs_human');
      ids.push(out.proposalId as string);
    }
    return ids;
  }

  async function untilReady(): Promise<void> {
    let ready = 0;
    for (let i = 0; i < 100 && ready !== 200; i++) {
      ready = (await request(app.getHttpServer()).get('/health/ready')).status;
      if (ready !== 200) await sleep(200);
    }
    expect(ready).toBe(200);
  }

  /** Approves every proposal at once; the server goes down (fast shutdown: connections cut, open transactions rolled back) when `trigger` resolves, and is back a second later. */
  async function approveThroughRestart(ids: string[], trigger: (answered: Promise<unknown>[]) => Promise<unknown>) {
    const inFlight = ids.map(approve);
    const restart = (async () => {
      await trigger(inFlight);
      await pausePostgres(dir);
      await sleep(1000);
      await resumePostgres(dir);
    })();
    const answers = await Promise.all(inFlight);
    await restart;
    return answers;
  }

  it('every approval answers a decision or a 503, and every proposal executes exactly once after the restart', async () => {
    const pipeline = app.get(ProposalPipeline);
    // Round one: the server goes down 15 ms after the approvals are sent. Round two: it goes down as soon as the first
    // approval has answered 200, so the others are mid-decision or mid-execution when their connections are cut.
    const qtys = [Array.from({ length: N }, (_, i) => 500 + i), Array.from({ length: N }, (_, i) => 600 + i)];
    const ids = [await submit(qtys[0]), await submit(qtys[1])];
    const rounds = [
      await approveThroughRestart(ids[0], () => sleep(15)),
      await (async () => {
        await untilReady();
        return approveThroughRestart(ids[1], (inFlight) =>
          Promise.race(inFlight.map((p) => p.then((r) => ((r as { status: number }).status === 200 ? r : new Promise(() => undefined))))),
        );
      })(),
    ];
    const statuses = rounds.flat().map((r) => r.status);
    for (const res of rounds.flat()) {
      expect([res.status, res.status === 500 ? res.text : '']).not.toEqual([500, expect.anything()]);
      expect([200, 503]).toContain(res.status);
      if (res.status === 503) expect(res.headers['retry-after']).toBeDefined();
    }
    // The fault landed in the middle: some approvals were decided, some refused by the outage.
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    await untilReady();
    // Decide again what the outage refused, from what is stored now (a decision that committed is not made twice).
    for (const [r, round] of rounds.entries()) {
      for (const [k, res] of round.entries()) {
        if (res.status === 200) continue;
        const now = await pipeline.get('acme', ids[r][k]);
        if (now.status === 'pending') expect((await approve(ids[r][k])).status).toBe(200);
      }
    }
    // A decision committed whose execution the outage cut is executed by recovery (the pipeline's loop does it too).
    await pipeline.recover();
    const ds = app.get(DataSource);
    for (const [r, round] of ids.entries()) {
      for (const [k, id] of round.entries()) {
        expect((await pipeline.get('acme', id)).status).toBe('executed');
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM sample_orders WHERE tenant_id = 'acme' AND qty = $1`, [qtys[r][k]]);
        expect([id, n]).toEqual([id, 1]);
      }
    }
  }, 120_000);
});
