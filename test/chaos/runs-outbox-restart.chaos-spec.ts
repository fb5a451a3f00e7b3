import { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { pausePostgres, resumePostgres, sampleOnOwnServerForSuite } from '../support/own-postgres';
import { CHAOS_SECRET as SECRET, sleep } from '../support/sample-process';
import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { deskLog } from '../../apps/sample/src/trading/order-commands';

// Enough runs that the batch is still going when the server stops (12 were seen to finish in the stop's window).
const N = 40;

async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await check().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * PostgreSQL restarted while background agent runs (the ops agent: order.cancel through command.execute and the
 * transactional outbox, then a desk-log note) are in flight. Nothing committed is lost, nothing happens twice, every run
 * ends succeeded or failed with its reason (none left running), the relay delivers every event, and the app serves
 * again without a restart of its own.
 */
describe('chaos: PostgreSQL restarted in the middle of agent runs and outbox relays', () => {
  let app: INestApplication;
  let dir: string;
  let ds: DataSource;
  const bearer = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'olga' })}`;

  sampleOnOwnServerForSuite(SECRET, (own) => {
    ({ app, dir } = own);
    ds = app.get(DataSource);
  });

  const post = (goal: string) =>
    request(app.getHttpServer()).post('/agents/ops/goals').set('Authorization', bearer).send({ goal }).timeout({ deadline: 30_000 });
  const runOf = async (id: string) =>
    (await request(app.getHttpServer()).get(`/agents/runs/${id}`).set('Authorization', bearer).timeout({ deadline: 10_000 })).body as {
      status: string;
      error?: string;
      answer?: string;
    };

  async function untilReady(): Promise<void> {
    await until('readiness 200', 30_000, async () =>
      (await request(app.getHttpServer()).get('/health/ready')).status === 200 ? true : undefined,
    );
  }

  it('every run ends succeeded or failed with its reason, each order is cancelled by one event, delivered, and noted once', async () => {
    const orders: string[] = [];
    for (let i = 0; i < N; i++) {
      const [{ id }] = await ds.query(
        `INSERT INTO sample_orders (tenant_id, user_id, symbol, side, qty, limit_price, status, run_id)
         VALUES ('acme', 'alice', 'ACME', 'buy', $1, 10, 'submitted', 'chaos-seed') RETURNING id`,
        [700 + i],
      );
      orders.push(id as string);
    }
    const notesBefore = deskLog.length;
    const posted = await Promise.all(orders.map((id) => post(`Cancel order ${id}`)));
    for (const res of posted) expect([res.status, res.body]).toEqual([202, { runId: expect.any(String) }]);
    const runIds = posted.map((r) => (r.body as { runId: string }).runId);
    // The server goes down once the first run has cancelled its order, while the others are queued or mid-run.
    await until('a first cancelled order', 30_000, async () => {
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM zmodu_outbox WHERE topic = 'order.cancelled'`);
      return n > 0 ? true : undefined;
    });
    const pausing = pausePostgres(dir);
    const seen: number[] = [];
    for (let i = 0; i < 20; i++) {
      const [{ n }] = await ds
        .query(`SELECT count(*)::int AS n FROM zmodu_outbox WHERE topic = 'order.cancelled'`)
        .catch(() => [{ n: -1 }]);
      seen.push(n);
      await sleep(20);
    }
    await pausing;
    // The fault landed mid-batch: some orders were cancelled before the server went down, not all of them.
    expect(Math.max(...seen)).toBeGreaterThan(0);
    expect(Math.max(...seen)).toBeLessThan(N);
    // While it is away the API says so: a post is a 503 with Retry-After, never a 500.
    const refused = await post('Cancel order 00000000-0000-0000-0000-000000000000');
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    await sleep(1500);
    await resumePostgres(dir);
    await untilReady();

    // Without a restart of the app: every run ends (the worker's recovery takes up what the outage interrupted).
    const ended = await until('every run to end', 60_000, async () => {
      const runs = await Promise.all(runIds.map(runOf));
      return runs.every((r) => r.status === 'succeeded' || r.status === 'failed') ? runs : undefined;
    });
    const cancelled = async (id: string) =>
      ((await ds.query(`SELECT status FROM sample_orders WHERE id = $1`, [id])) as { status: string }[])[0].status === 'cancelled';
    for (const [k, r] of ended.entries()) {
      // A clear terminal state: failed with its reason, or an answer that says what happened, and says it truly.
      if (r.status === 'failed') expect(r.error).toEqual(expect.any(String));
      else if (/NOT cancelled/.test(r.answer ?? '')) expect(await cancelled(orders[k])).toBe(false);
      else expect([r.answer, await cancelled(orders[k])]).toEqual([expect.stringMatching(/cancelled/i), true]);
    }
    // A goal the outage stopped is posted again by its user: its order ends cancelled, once all the same.
    for (const k of orders.keys()) {
      if (await cancelled(orders[k])) continue;
      const again = await post(`Cancel order ${orders[k]}`);
      expect(again.status).toBe(202);
      const s = await until('the retried run', 30_000, async () => {
        const r = await runOf((again.body as { runId: string }).runId);
        return r.status === 'succeeded' || r.status === 'failed' ? r.status : undefined;
      });
      expect([orders[k], s]).toEqual([orders[k], 'succeeded']);
    }
    // One event per order, each delivered by the relay, which resumed by itself.
    const events = await until('every event delivered', 60_000, async () => {
      const rows = (await ds.query(
        `SELECT payload->>'orderId' AS "orderId", status FROM zmodu_outbox WHERE topic = 'order.cancelled'`,
      )) as { orderId: string; status: string }[];
      return rows.length >= N && rows.every((e) => e.status === 'delivered') ? rows : undefined;
    });
    expect(events.map((e) => e.orderId).sort()).toEqual([...orders].sort());
    const statuses = (await ds.query(`SELECT status FROM sample_orders WHERE id = ANY($1)`, [orders])) as { status: string }[];
    expect(statuses.every((s) => s.status === 'cancelled')).toBe(true);
    // Each order noted on the desk log once (the note follows a cancellation that happened, once per run).
    const notes = deskLog.slice(notesBefore).map((m) => m.message);
    for (const id of orders) expect([id, notes.filter((m) => m.includes(id)).length]).toEqual([id, 1]);
    console.log('RUNS', JSON.stringify(ended.map((r) => [r.status, r.error ?? r.answer])));
  }, 180_000);
});
