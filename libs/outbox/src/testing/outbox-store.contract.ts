import type { NewOutboxEvent, OutboxStore } from '../outbox.store';

/** What a store factory gives the contract (the same shape as `@zmodu/guard/testing`'s). */
export interface OutboxStoreHarness {
  store: OutboxStore;
  /** Release what the store holds (connections, files). */
  close?: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The shared cases every OutboxStore must pass, in a describe() named `name`. The factory returns
 * a fresh, empty store (its own table or database, or one you truncated). The cases include
 * concurrency (many claimers at once, many transactions on one key) and lease fencing, with short
 * leases and real waits: run them on the database your store will use in production.
 */
export function outboxStoreContract(name: string, factory: () => Promise<OutboxStoreHarness>): void {
  describe(name, () => {
    let h: OutboxStoreHarness;
    let store: OutboxStore;
    beforeEach(async () => {
      h = await factory();
      store = h.store;
    });
    afterEach(async () => {
      await h.close?.();
    });

    const event = (over: Partial<NewOutboxEvent> = {}): NewOutboxEvent => ({
      tenantId: 't1',
      topic: 'a.topic',
      payload: { n: 1 },
      maxAttempts: 3,
      ...over,
    });
    const enqueue = (over: Partial<NewOutboxEvent> = {}) => store.transaction((tx) => store.enqueue(tx, event(over)));
    const claimAll = (owner: string, leaseMs = 5000, limit = 100) => store.claim({ owner, limit, leaseMs });

    it('enqueues in the caller transaction: committed with it, gone when it rolls back', async () => {
      const id = await enqueue({
        payload: { deep: { a: [1, 'x'] } },
        idempotencyKey: 'k1',
        command: { name: 'ledger.credit', argsHash: 'h1' },
      });
      await expect(
        store.transaction(async (tx) => {
          await store.enqueue(tx, event({ idempotencyKey: 'k2' }));
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      const got = await store.get('t1', id);
      expect(got).toMatchObject({
        id,
        tenantId: 't1',
        topic: 'a.topic',
        payload: { deep: { a: [1, 'x'] } },
        idempotencyKey: 'k1',
        status: 'pending',
        attempts: 0,
        maxAttempts: 3,
      });
      expect(got?.command).toEqual({ name: 'ledger.credit', argsHash: 'h1' });
      expect(got?.createdAt).toBeInstanceOf(Date);
      expect(got?.deliveredAt).toBeNull();
      expect((await store.findByKey('t1', 'k1'))?.id).toBe(id);
      expect(await store.findByKey('t1', 'k2')).toBeNull();
      expect(await store.findByKey('t2', 'k1')).toBeNull();
      expect(await store.get('t2', id)).toBeNull();
      const noTenant = await enqueue({ tenantId: null, idempotencyKey: 'k0' });
      expect(await store.findByKey(null, 'k0')).toMatchObject({ id: noTenant, tenantId: null, command: null });
    });

    it('lists a tenant page by page, newest first, filtered by status', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(await enqueue({ payload: { i } }));
        await sleep(2);
      }
      await enqueue({ tenantId: 't2' });
      const first = await store.list('t1', { page: 1, limit: 2 });
      expect(first).toMatchObject({ total: 5, page: 1, limit: 2 });
      expect(first.items.map((e) => e.id)).toEqual([ids[4], ids[3]]);
      expect((await store.list('t1', { page: 3, limit: 2 })).items.map((e) => e.id)).toEqual([ids[0]]);
      expect(await store.list('t1', { status: 'dead', page: 1, limit: 10 })).toMatchObject({ total: 0, items: [] });
      expect((await store.list('t1', { status: 'pending', page: 1, limit: 10 })).total).toBe(5);
    });

    it('claims due events with a new lease token and one more attempt; a live claim is not claimed again', async () => {
      const a = await enqueue();
      const b = await enqueue({ topic: 'b.topic' });
      const claimed = await claimAll('r1');
      expect(claimed.map((c) => c.event.id).sort()).toEqual([a, b].sort());
      for (const c of claimed) expect(c.event).toMatchObject({ status: 'delivering', attempts: 1 });
      for (const c of claimed) expect(typeof c.leaseToken).toBe('string');
      expect(await claimAll('r2')).toEqual([]);
      expect(await store.claim({ owner: 'r3', limit: 0, leaseMs: 1000 })).toEqual([]);
    });

    it('many claimers at once claim each event exactly once', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 30; i++) ids.add(await enqueue({ topic: `t${i % 3}`, payload: { i } }));
      const seen: string[] = [];
      for (let round = 0; round < 10; round++) {
        const batches = await Promise.all(Array.from({ length: 12 }, (_, i) => store.claim({ owner: `c${i}`, limit: 3, leaseMs: 10_000 })));
        const got = batches.flat();
        seen.push(...got.map((c) => c.event.id));
        if (got.length === 0) break;
      }
      expect(seen).toHaveLength(30);
      expect(new Set(seen)).toEqual(ids);
    });

    it('caps a claim per topic, and skips a topic whose cap is used up', async () => {
      for (let i = 0; i < 6; i++) await enqueue({ topic: 'slow' });
      for (let i = 0; i < 2; i++) await enqueue({ topic: 'fast' });
      const first = await store.claim({ owner: 'r', limit: 4, leaseMs: 10_000, perTopic: { limit: 2, busy: {} } });
      expect(first.map((c) => c.event.topic).sort()).toEqual(['fast', 'fast', 'slow', 'slow']);
      expect(await store.claim({ owner: 'r', limit: 4, leaseMs: 10_000, perTopic: { limit: 2, busy: { slow: 2, fast: 2 } } })).toEqual([]);
      const more = await store.claim({ owner: 'r', limit: 4, leaseMs: 10_000, perTopic: { limit: 2, busy: { slow: 1 } } });
      expect(more.map((c) => c.event.topic)).toEqual(['slow']);
    });

    it('claims only the topics asked for (a relay claims only what it has handlers for)', async () => {
      await enqueue({ topic: 'mine' });
      await enqueue({ topic: 'theirs' });
      const got = await store.claim({ owner: 'r', limit: 10, leaseMs: 10_000, topics: ['mine'] });
      expect(got.map((c) => c.event.topic)).toEqual(['mine']);
      expect(await store.claim({ owner: 'r', limit: 10, leaseMs: 10_000, topics: [] })).toEqual([]);
      expect((await store.claim({ owner: 'r', limit: 10, leaseMs: 10_000 })).map((c) => c.event.topic)).toEqual(['theirs']);
    });

    it('refuses a renew or a settlement under a stale lease token; the new holder settles', async () => {
      const id = await enqueue();
      const [old] = await store.claim({ owner: 'r1', limit: 1, leaseMs: 50 });
      await sleep(150);
      const [fresh] = await store.claim({ owner: 'r2', limit: 1, leaseMs: 10_000 });
      expect(fresh.event).toMatchObject({ id, attempts: 2 });
      expect(fresh.leaseToken).not.toBe(old.leaseToken);
      expect(await store.renew(id, old.leaseToken, 10_000)).toBe(false);
      expect(await store.settleFailed(id, old.leaseToken, { error: 'late', retryInMs: 0 })).toBe('stale');
      expect(await store.settleDelivered(id, old.leaseToken)).toBe('stale');
      expect(await store.renew(id, fresh.leaseToken, 10_000)).toBe(true);
      expect(await store.settleDelivered(id, fresh.leaseToken)).toBe('delivered');
      expect(await store.get('t1', id)).toMatchObject({ status: 'delivered', deliveredAt: expect.any(Date), lastError: null });
      expect(await store.renew(id, fresh.leaseToken, 10_000)).toBe(false);
    });

    it('a renewed lease keeps an event from being taken over; concurrent renew and takeover: exactly one wins', async () => {
      const id = await enqueue();
      const [c] = await store.claim({ owner: 'r1', limit: 1, leaseMs: 150 });
      await sleep(75);
      expect(await store.renew(id, c.leaseToken, 10_000)).toBe(true);
      await sleep(150);
      expect(await claimAll('r2')).toEqual([]);
      // Lease run out: a renew by the holder and a claim by another relay race; one of them wins.
      const id2 = await enqueue();
      const [c2] = (await claimAll('r1', 50)).filter((x) => x.event.id === id2);
      await sleep(120);
      const [renewed, taken] = await Promise.all([
        store.renew(id2, c2.leaseToken, 10_000),
        store.claim({ owner: 'r2', limit: 5, leaseMs: 10_000 }),
      ]);
      const takenOver = taken.some((x) => x.event.id === id2);
      expect(renewed !== takenOver).toBe(true);
    });

    it('retries with a delay, dead-letters when the attempts are used up; an admin retry starts again', async () => {
      const id = await enqueue({ maxAttempts: 2 });
      const [first] = await claimAll('r');
      expect(await store.settleFailed(id, first.leaseToken, { error: 'down', retryInMs: 60_000 })).toBe('failed');
      expect(await store.get('t1', id)).toMatchObject({ status: 'pending', lastError: 'down', attempts: 1 });
      expect(await claimAll('r')).toEqual([]); // not due for a minute
      const id2 = await enqueue({ maxAttempts: 2 });
      const [a] = await claimAll('r');
      expect(await store.settleFailed(id2, a.leaseToken, { error: 'down', retryInMs: 0 })).toBe('failed');
      const [b] = await claimAll('r');
      expect(b.event).toMatchObject({ id: id2, attempts: 2 });
      expect(await store.settleFailed(id2, b.leaseToken, { error: 'still down', retryInMs: 0 })).toBe('dead');
      expect(await store.get('t1', id2)).toMatchObject({ status: 'dead', attempts: 2, lastError: 'still down' });
      expect(await claimAll('r')).toEqual([]);
      expect(await store.retryDead('t2', id2)).toBeNull();
      expect(await store.retryDead('t1', id)).toBeNull(); // pending, not dead
      expect(await store.retryDead('t1', id2)).toMatchObject({ id: id2, status: 'pending', attempts: 0 });
      expect((await claimAll('r')).map((c) => c.event.id)).toEqual([id2]);
    });

    it('backlog (when the store has it): pending, delivering and dead across tenants, and the oldest undelivered event', async () => {
      if (!store.backlog) return; // optional: a store without it is reported as having no backlog figures
      expect(await store.backlog()).toEqual({ pending: 0, delivering: 0, dead: 0, oldestPendingAt: null });
      const first = await enqueue();
      await enqueue({ tenantId: 't2' });
      await enqueue({ tenantId: null, maxAttempts: 1 });
      const [claimed] = await store.claim({ owner: 'r', limit: 1, leaseMs: 10_000 });
      const delivered = await enqueue();
      const backlog = await store.backlog();
      expect(backlog).toMatchObject({ pending: 3, delivering: 1, dead: 0 });
      // The first event written (claimed now: delivering, still undelivered), as the store keeps its time.
      expect(backlog.oldestPendingAt).toBeInstanceOf(Date);
      expect(backlog.oldestPendingAt).toEqual((await store.get('t1', first))?.createdAt);
      expect(await store.settleFailed(claimed.event.id, claimed.leaseToken, { error: 'x', retryInMs: 0 })).not.toBe('stale');
      const rest = await claimAll('r');
      for (const c of rest) {
        if (c.event.id === delivered) expect(await store.settleDelivered(c.event.id, c.leaseToken)).toBe('delivered');
        else await store.settleFailed(c.event.id, c.leaseToken, { error: 'x', retryInMs: 60_000 });
      }
      // Two back to pending (attempts left), the one of a single attempt dead, one delivered.
      expect(await store.backlog()).toMatchObject({ pending: 2, delivering: 0, dead: 1 });
    });

    it('dead-letters the expired last attempt of a dead holder; a live one is left alone; a late success still wins', async () => {
      const live = await enqueue({ maxAttempts: 1 });
      const [l] = await store.claim({ owner: 'alive', limit: 1, leaseMs: 10_000 });
      const id = await enqueue({ maxAttempts: 1 });
      const [d] = await store.claim({ owner: 'dies', limit: 1, leaseMs: 40 });
      expect(d.event.id).toBe(id);
      await sleep(120);
      expect(await claimAll('other')).toEqual([]); // no attempts left: never delivered again
      expect(await store.reapExpired()).toBe(1);
      expect(await store.get('t1', live)).toMatchObject({ status: 'delivering' });
      expect(await store.get('t1', id)).toMatchObject({ status: 'dead', lastError: expect.stringMatching(/lease/) });
      expect(await store.reapExpired()).toBe(0);
      // The "dead" holder was only slow: its failure is refused, its success wins over the dead-lettering.
      expect(await store.renew(id, d.leaseToken, 10_000)).toBe(false);
      expect(await store.settleFailed(id, d.leaseToken, { error: 'late failure', retryInMs: 0 })).toBe('stale');
      expect(await store.settleDelivered(id, d.leaseToken)).toBe('delivered');
      expect(await store.get('t1', id)).toMatchObject({ status: 'delivered', deliveredAt: expect.any(Date) });
      expect(await store.settleFailed(live, l.leaseToken, { error: 'x', retryInMs: 0 })).toBe('dead');
    });

    it('a success reported under an old token does not override another relay live claim', async () => {
      const id = await enqueue();
      const [old] = await store.claim({ owner: 'r1', limit: 1, leaseMs: 40 });
      await sleep(120);
      const [fresh] = await claimAll('r2');
      expect(await store.settleDelivered(id, old.leaseToken)).toBe('stale');
      expect(await store.get('t1', id)).toMatchObject({ status: 'delivering' });
      expect(await store.settleFailed(id, fresh.leaseToken, { error: 'x', retryInMs: 60_000 })).toBe('failed');
      // Back to pending (no live claim): the late success of the first holder is the truth now.
      expect(await store.settleDelivered(id, old.leaseToken)).toBe('delivered');
    });

    it('a key lock lets one transaction at a time through: concurrent lock-then-look-up enqueues one event', async () => {
      let inside = 0;
      let most = 0;
      const attempt = (i: number) =>
        store.transaction(async (tx) => {
          await store.lockKey(tx, 'lock:k');
          inside++;
          most = Math.max(most, inside);
          try {
            const prior = await store.findByKey('t1', 'k', tx);
            if (prior) return { id: prior.id, fresh: false };
            await sleep(30);
            return { id: await store.enqueue(tx, event({ idempotencyKey: 'k', payload: { i } })), fresh: true };
          } finally {
            inside--;
          }
        });
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => attempt(i)));
      expect(most).toBe(1);
      expect(results.filter((r) => r.fresh)).toHaveLength(1);
      expect(new Set(results.map((r) => r.id)).size).toBe(1);
      expect((await store.list('t1', { page: 1, limit: 10 })).total).toBe(1);
    });

    it('a key lock is released by a rollback', async () => {
      await expect(
        store.transaction(async (tx) => {
          await store.lockKey(tx, 'lock:r');
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      let timer: NodeJS.Timeout | undefined;
      const blocked = new Promise<string>((r) => (timer = setTimeout(() => r('blocked'), 5000)));
      const got = await Promise.race([store.transaction(async (tx) => (await store.lockKey(tx, 'lock:r'), 'locked')), blocked]);
      clearTimeout(timer);
      expect(got).toBe('locked');
    });

    it('a bounded wait for a held key gives up (false) instead of waiting on; it never holds the key beside another holder', async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      let holderDone = false;
      const holder = store.transaction(async (tx) => {
        await store.lockKey(tx, 'lock:w');
        locked();
        await held;
        holderDone = true;
      });
      await isLocked;
      // On one embedded session the second transaction begins only after the first has ended (and then gets the key):
      // the holder is let go if, after a while, the waiter's transaction has not begun. Where transactions run side by
      // side, the holder keeps the key until the waiter answers: a wait that does not give up never ends, and jest's test
      // timeout fails it.
      let waiterBegan = false;
      const timer = setTimeout(() => waiterBegan || release(), 1500);
      const outcome = await store
        .transaction(async (tx) => {
          waiterBegan = true;
          return { got: await store.lockKey(tx, 'lock:w', 100), holderDone };
        })
        .catch((err: unknown) => ({ got: err, holderDone }));
      clearTimeout(timer);
      release();
      await holder;
      // Gave up while the holder still held the key, or got it only once the holder was done: never beside it.
      expect(outcome).toEqual(outcome.got === false ? { got: false, holderDone: false } : { got: true, holderDone: true });
    });
  });
}
