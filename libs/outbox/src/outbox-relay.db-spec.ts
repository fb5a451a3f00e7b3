import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { startOutboxApp } from './__fixtures__/outbox-app';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { OutboxRelay } from './outbox-relay';
import { OutboxService } from './outbox.service';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A gate the test opens: what waits on it runs on only when the test says so, however fast or slow the machine is. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('outbox relay: leases per delivery, concurrent deliveries, per-topic limits', () => {
  let db: TestDatabase;
  let t: Awaited<ReturnType<typeof startOutboxApp>>;
  let server: Server;
  let url: string;
  /** POSTs the webhook answered with a 200, by event id. */
  const posted = new Map<string, number>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        // A slow endpoint: 400 ms to answer.
        setTimeout(() => {
          const id = String(req.headers['x-event']);
          posted.set(id, (posted.get(id) ?? 0) + 1);
          res.writeHead(200).end();
        }, 400);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    db = await createTestDatabase();
    t = await startOutboxApp(db);
  });

  afterAll(async () => {
    await t?.app.close();
    await db?.drop();
    server?.closeAllConnections();
    server?.close();
  });

  const statusOf = async (topic: string) =>
    (await t.ds.query(`SELECT status, count(*)::int AS n FROM zmodu_outbox WHERE topic = $1 GROUP BY status`, [topic])).reduce(
      (acc: Record<string, number>, r: { status: string; n: number }) => ({ ...acc, [r.status]: Number(r.n) }),
      {},
    ) as Record<string, number>;

  it('two relays and a slow webhook, maxAttempts 1: nothing both delivered and dead, nothing POSTed twice', async () => {
    const outbox = t.app.get(OutboxService);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await outbox.publish({ tenantId: 'acme', topic: 'hook.slow', payload: { i }, maxAttempts: 1 }));
    // Deadlines far above the webhook's 400 ms (a loaded machine must not time a POST out: that is not what this is about).
    const relays = ['A', 'B'].map(
      (owner) => new OutboxRelay(t.store, { owner, concurrency: 3, leaseMs: 35_000, handlerTimeoutMs: 30_000, pollIntervalMs: 50 }),
    );
    for (const r of relays)
      r.on('hook.slow', async (event, ctx) => {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'x-event': event.id },
          body: JSON.stringify(event.payload),
          signal: ctx.signal,
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
      });
    for (const r of relays) r.start();
    try {
      await until('every event settled', async () => {
        const s = await statusOf('hook.slow');
        return (s.delivered ?? 0) + (s.dead ?? 0) === ids.length;
      });
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
    }
    const rows: Array<{ id: string; status: string; delivered_at: Date | null }> = await t.ds.query(
      `SELECT id, status, delivered_at FROM zmodu_outbox WHERE topic = 'hook.slow'`,
    );
    const bothDeliveredAndDead = rows.filter((r) => r.status === 'dead' && posted.has(r.id));
    expect(bothDeliveredAndDead).toEqual([]);
    expect(rows.filter((r) => r.status !== 'delivered' || r.delivered_at === null)).toEqual([]);
    expect(ids.filter((id) => posted.get(id) !== 1)).toEqual([]);
    // Both relays took part, and each ran deliveries at once.
    expect(relays.every((r) => r.stats.delivered > 0)).toBe(true);
    expect(relays[0].stats.delivered + relays[1].stats.delivered).toBe(ids.length);
  });

  it('a slow topic does not hold up another topic, and a freed slot claims more without waiting for the poll', async () => {
    const outbox = t.app.get(OutboxService);
    for (let i = 0; i < 6; i++) await outbox.publish({ tenantId: 'acme', topic: 'topic.slow', payload: { i } });
    for (let i = 0; i < 3; i++) await outbox.publish({ tenantId: 'acme', topic: 'topic.fast', payload: { i } });
    let slowInFlight = 0;
    let slowMost = 0;
    // The slow topic's receiver hangs until the test lets it go.
    const receiver = gate();
    // One poll only (the first, at start): everything after it comes from freed slots.
    const relay = new OutboxRelay(t.store, {
      owner: 'topics',
      concurrency: 4,
      topicConcurrency: 2,
      handlerTimeoutMs: 30_000,
      pollIntervalMs: 60_000,
    });
    relay.on('topic.slow', async () => {
      slowInFlight++;
      slowMost = Math.max(slowMost, slowInFlight);
      await receiver.opened;
      slowInFlight--;
    });
    relay.on('topic.fast', () => undefined);
    relay.start();
    try {
      await until('the fast topic delivered', async () => (await statusOf('topic.fast')).delivered === 3);
      // Every fast event was delivered while two slow ones (the topic's limit) held their slots, none of them done.
      expect(slowInFlight).toBe(2);
      expect((await statusOf('topic.slow')).delivered ?? 0).toBe(0);
      receiver.open();
      await until('the slow topic delivered', async () => (await statusOf('topic.slow')).delivered === 6);
    } finally {
      receiver.open();
      await relay.stop();
    }
    expect(slowMost).toBe(2);
    expect(relay.stats).toMatchObject({ claimed: 9, delivered: 9, failed: 0, dead: 0, stale: 0 });
  });

  it('a late success from a stalled holder wins over the dead-lettering of its expired last attempt', async () => {
    const outbox = t.app.get(OutboxService);
    const id = await outbox.publish({ tenantId: 'acme', topic: 'stall.topic', payload: {}, maxAttempts: 1 });
    let delivered = 0;
    // The holder delivers at once, then its process stalls (until the test lets it go) past its 100 ms lease.
    const stall = gate();
    let stalled = false;
    const holder = new OutboxRelay(t.store, {
      owner: 'holder',
      leaseMs: 100,
      handlerTimeoutMs: 50,
      hooks: {
        afterDeliver: () => {
          stalled = true;
          return stall.opened;
        },
      },
    });
    holder.on('stall.topic', () => void delivered++);
    const other = new OutboxRelay(t.store, { owner: 'other' });
    other.on('stall.topic', () => void delivered++);
    const holderPass = holder.runOnce();
    try {
      await until('the stalled holder lease ran out', async () => {
        const [lease] = await t.ds.query(
          `SELECT lease_owner = 'holder' AND lease_until < now() AS "lapsed" FROM zmodu_outbox WHERE id = $1`,
          [id],
        );
        return lease?.lapsed === true;
      });
      expect(stalled).toBe(true);
      // Its lease ran out on the last attempt: the other relay takes the claim over and dead-letters it.
      expect(await other.runOnce()).toMatchObject({ claimed: 0, dead: 1 });
      expect(await outbox.get('acme', id)).toMatchObject({ status: 'dead' });
    } finally {
      stall.open();
      await Promise.allSettled([holderPass]);
    }
    expect(await holderPass).toMatchObject({ claimed: 1, delivered: 1, stale: 0 });
    expect(await outbox.get('acme', id)).toMatchObject({ status: 'delivered', deliveredAt: expect.any(Date) });
    expect(delivered).toBe(1);
  });

  it('runOnce delivers up to `concurrency` events at once, per-topic limit applied', async () => {
    const outbox = t.app.get(OutboxService);
    for (let i = 0; i < 5; i++) await outbox.publish({ tenantId: 'acme', topic: 'once.a', payload: { i } });
    for (let i = 0; i < 5; i++) await outbox.publish({ tenantId: 'acme', topic: 'once.b', payload: { i } });
    let inFlight = 0;
    let most = 0;
    // A barrier: each handler waits until six are in at once. Deliveries one after the other would never get there:
    // after 10 s from the first arrival the barrier gives up, and `most` says how many came.
    const allIn = gate();
    let giveUp: NodeJS.Timeout | undefined;
    const relay = new OutboxRelay(t.store, { owner: 'once', concurrency: 6, topicConcurrency: 3, handlerTimeoutMs: 30_000 });
    const handler = async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      giveUp ??= setTimeout(allIn.open, 10_000);
      if (inFlight === 6) allIn.open();
      await allIn.opened;
      inFlight--;
    };
    relay.on('once.a', handler);
    relay.on('once.b', handler);
    try {
      expect(await relay.runOnce()).toMatchObject({ claimed: 6, delivered: 6 });
    } finally {
      clearTimeout(giveUp);
    }
    expect(most).toBe(6); // six deliveries at once, not one after the other
    expect(await statusOf('once.a')).toEqual({ delivered: 3, pending: 2 });
    expect(await relay.runOnce()).toMatchObject({ claimed: 4, delivered: 4 });
  });

  it('a relay without a handler for a topic leaves its events to a relay that has one (none is dead-lettered for want of a handler)', async () => {
    const outbox = t.app.get(OutboxService);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await outbox.publish({ tenantId: 'acme', topic: 'only.b', payload: { i }, maxAttempts: 1 }));
    const a = new OutboxRelay(t.store, { owner: 'a', handlerTimeoutMs: 500 });
    a.on('something.else', () => undefined);
    const b = new OutboxRelay(t.store, { owner: 'b', handlerTimeoutMs: 500 });
    b.on('only.b', () => undefined);
    expect(await a.runOnce()).toMatchObject({ claimed: 0, dead: 0 });
    await Promise.all([a.runOnce(), b.runOnce(), a.runOnce()]);
    await b.runOnce();
    expect(await statusOf('only.b')).toEqual({ delivered: 6 });
  });

  it('a success that comes after the handler deadline is settled as delivered (it wins over the failure recorded at the deadline)', async () => {
    const outbox = t.app.get(OutboxService);
    const id = await outbox.publish({ tenantId: 'acme', topic: 'late.success', payload: {}, maxAttempts: 1 });
    let done = 0;
    const relay = new OutboxRelay(t.store, { owner: 'late', handlerTimeoutMs: 100, leaseMs: 1000 });
    relay.on('late.success', async () => {
      await sleep(250); // ignores its signal
      done++;
    });
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, dead: 1 });
    await until('the late success settled', async () => (await outbox.get('acme', id))?.status === 'delivered', 5000);
    expect(done).toBe(1);
  });

  it('a settlement that fails once after a 200 is tried again: the event ends delivered, not dead for an admin to resend', async () => {
    const outbox = t.app.get(OutboxService);
    const id = await outbox.publish({ tenantId: 'acme', topic: 'settle.flaky', payload: {}, maxAttempts: 1 });
    let failures = 1;
    const flaky = Object.create(t.store) as typeof t.store;
    flaky.settleDelivered = async (eventId: string, token: string) => {
      if (failures-- > 0) throw new Error('connection terminated');
      return t.store.settleDelivered(eventId, token);
    };
    let posts = 0;
    const relay = new OutboxRelay(flaky, { owner: 'flaky', handlerTimeoutMs: 500 });
    relay.on('settle.flaky', () => void posts++);
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, delivered: 1, dead: 0 });
    expect(await outbox.get('acme', id)).toMatchObject({ status: 'delivered' });
    expect(posts).toBe(1);
  });

  it('a handler that ignores its signal keeps its slot until it ends: never more handlers at once than concurrency', async () => {
    const outbox = t.app.get(OutboxService);
    for (let i = 0; i < 6; i++) await outbox.publish({ tenantId: 'acme', topic: 'deaf.handler', payload: { i }, maxAttempts: 3 });
    let running = 0;
    let most = 0;
    let finished = 0;
    const relay = new OutboxRelay(t.store, {
      owner: 'deaf',
      concurrency: 2,
      topicConcurrency: 2,
      handlerTimeoutMs: 50,
      leaseMs: 2000,
      pollIntervalMs: 50,
      backoff: { baseMs: 10, maxMs: 10 },
    });
    relay.on('deaf.handler', async () => {
      running++;
      most = Math.max(most, running);
      await sleep(400);
      running--;
      finished++;
    });
    relay.start();
    try {
      await until('six handlers finished', async () => finished >= 6, 15_000);
    } finally {
      await relay.stop();
    }
    expect(most).toBeLessThanOrEqual(2);
  });
});
