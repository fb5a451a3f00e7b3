import { randomUUID } from 'node:crypto';
import { cronTickJobId } from '../jobs/agent-job.ports';
import type { AgentJobStore, NewAgentJob } from '../jobs/agent-job.ports';

/** What a job store factory gives the contract. */
export interface AgentJobStoreHarness {
  store: AgentJobStore;
  close?: () => Promise<void>;
}

/**
 * The shared cases every AgentJobStore must pass, in a describe() named `name`. The factory returns a fresh, empty
 * store. Includes many concurrent claimers of one tick, a job's and a @Cron's (exactly one wins) and 60 concurrent creators under a cap of 20
 * (exactly 20 created): run it on your production database.
 */
export function agentJobStoreContract(name: string, factory: () => Promise<AgentJobStoreHarness>): void {
  describe(name, () => {
    let h: AgentJobStoreHarness;
    let store: AgentJobStore;
    beforeEach(async () => {
      h = await factory();
      store = h.store;
    });
    afterEach(async () => {
      await h.close?.();
    });

    const job = (over: Partial<NewAgentJob> = {}): NewAgentJob => ({
      id: randomUUID(),
      tenantId: 't1',
      userId: 'u1',
      permissions: ['read'],
      agent: 'helper',
      goal: 'summarize the day',
      cron: '0 9 * * *',
      timeZone: 'UTC',
      missed: 'skip',
      origin: 'dynamic',
      ...over,
    });

    it('stores a job and reads it back for its tenant only', async () => {
      const j = job();
      await store.upsert(j);
      const got = await store.get('t1', j.id);
      expect(got).toMatchObject({ ...j, cancelledAt: null, lastTickAt: null });
      expect(got?.createdAt).toBeInstanceOf(Date);
      expect(await store.get('t2', j.id)).toBeNull();
      expect(await store.get('', j.id)).toBeNull();
      expect(await store.get('t1', 'unknown')).toBeNull();
    });

    it('upsert replaces the definition of the same id and keeps one row', async () => {
      const j = job({ origin: 'static' });
      await store.upsert(j);
      await store.upsert({ ...j, goal: 'new goal', cron: '*/5 * * * *' });
      expect(await store.active()).toHaveLength(1);
      expect(await store.get('t1', j.id)).toMatchObject({ goal: 'new goal', cron: '*/5 * * * *' });
    });

    it('lists and counts the tenant jobs only; cancel is scoped by tenant', async () => {
      const a = job();
      const b = job({ tenantId: 't2' });
      await store.upsert(a);
      await store.upsert(b);
      expect((await store.list('t1')).map((j) => j.id)).toEqual([a.id]);
      expect(await store.count('t1')).toBe(1);
      expect(await store.list('')).toEqual([]);
      expect(await store.cancel('t1', b.id)).toBe(false);
      expect(await store.get('t2', b.id)).toMatchObject({ cancelledAt: null });
      expect(await store.cancel('t1', a.id)).toBe(true);
      expect(await store.cancel('t1', a.id)).toBe(false);
      expect(await store.list('t1')).toEqual([]);
      expect(await store.count('t1')).toBe(0);
      expect((await store.active()).map((j) => j.id)).toEqual([b.id]);
    });

    it('a tick is claimed once and moves last_tick_at forward only', async () => {
      const j = job();
      await store.upsert(j);
      const t1 = new Date('2026-01-01T09:00:00.000Z');
      const t0 = new Date('2025-12-31T09:00:00.000Z');
      expect(await store.claimTick(j.id, t1)).toBe(true);
      expect(await store.claimTick(j.id, t1)).toBe(false);
      expect(await store.claimTick(j.id, t0)).toBe(true);
      expect((await store.get('t1', j.id))?.lastTickAt?.toISOString()).toBe(t1.toISOString());
      await store.setTickRun(j.id, t1, 'run-1');
    });

    it('claims no tick of a cancelled job (cancelled on another instance before this one synced), nor of an unknown one', async () => {
      const j = job({ id: 'static:cancelled-elsewhere', origin: 'static' });
      await store.upsert(j);
      const tick = new Date('2026-01-01T09:00:00.000Z');
      expect(await store.cancel('t1', j.id)).toBe(true);
      expect(await store.claimTick(j.id, tick)).toBe(false);
      expect(await store.claimTick('no-such-job', tick)).toBe(false);
      await store.upsert(j); // active again (a static job declared again): its ticks are claimed once more
      expect(await store.claimTick(j.id, tick)).toBe(true);
    });

    it('retires static jobs no longer declared; an upsert of a static job revives it, a dynamic one stays cancelled', async () => {
      const kept = job({ id: 'static:kept', origin: 'static' });
      const gone = job({ id: 'static:gone', origin: 'static', tenantId: 't2' });
      const dynamic = job();
      for (const j of [kept, gone, dynamic]) await store.upsert(j);
      expect(await store.retireStatic([kept.id])).toEqual([gone.id]);
      expect(await store.retireStatic([kept.id])).toEqual([]);
      expect((await store.active()).map((j) => j.id).sort()).toEqual([dynamic.id, kept.id].sort());
      expect(await store.get('t2', gone.id)).toMatchObject({ cancelledAt: expect.any(Date) });
      await store.upsert(gone); // the declaration is back (a rollback, a newer instance)
      expect(await store.get('t2', gone.id)).toMatchObject({ cancelledAt: null });
      expect(await store.cancel('t1', dynamic.id)).toBe(true);
      await store.upsert(dynamic);
      expect(await store.get('t1', dynamic.id)).toMatchObject({ cancelledAt: expect.any(Date) });
      expect(await store.retireStatic([])).toEqual(expect.arrayContaining([kept.id, gone.id]));
      expect(await store.active()).toEqual([]);
    });

    it('claims again a tick claimed but never posted, once per caller window, until its run is recorded', async () => {
      const j = job();
      await store.upsert(j);
      const tick = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000); // ticks are whole minutes
      expect(await store.claimTick(j.id, tick)).toBe(true);
      expect(await store.reclaimUnposted(3_600_000, 10)).toEqual([]); // claimed just now: its poster may still post
      await new Promise((r) => setTimeout(r, 1100));
      // Eight at once, each claiming ticks older than 1 s: the first claims it again (its claim time renewed), the
      // others find it claimed just now.
      const concurrent = await Promise.all(Array.from({ length: 8 }, () => store.reclaimUnposted(1000, 10)));
      const won = concurrent.flat();
      expect(won).toHaveLength(1);
      expect(won[0].job).toMatchObject({ id: j.id, tenantId: 't1', goal: j.goal });
      expect(won[0].tick.toISOString()).toBe(tick.toISOString());
      await new Promise((r) => setTimeout(r, 20));
      await store.setTickRun(j.id, tick, 'run-1');
      expect(await store.reclaimUnposted(0, 10)).toEqual([]);
      const other = job();
      await store.upsert(other);
      expect(await store.claimTick(other.id, tick)).toBe(true);
      expect(await store.cancel('t1', other.id)).toBe(true);
      await new Promise((r) => setTimeout(r, 20));
      expect(await store.reclaimUnposted(0, 10)).toEqual([]); // a cancelled job's ticks are not posted
      const old = job();
      await store.upsert(old);
      expect(await store.claimTick(old.id, new Date(Date.now() - 2 * 86_400_000))).toBe(true);
      await new Promise((r) => setTimeout(r, 20));
      expect(await store.reclaimUnposted(0, 10)).toEqual([]); // older than a day: given up
    });

    it('stores the task and the expiry of a job and reads them back', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000);
      const j = job({ task: 'daily', expiresAt });
      expect(await store.create(j, 5)).toBe(true);
      const got = await store.get('t1', j.id);
      expect(got).toMatchObject({ task: 'daily', permissions: ['read'] });
      expect(got?.expiresAt?.getTime()).toBe(expiresAt.getTime());
      const plain = job();
      await store.upsert(plain);
      expect(await store.get('t1', plain.id)).toMatchObject({ task: null, expiresAt: null });
    });

    it('refuses a job past the cap of active jobs; cancelled and expired jobs do not count', async () => {
      for (let i = 0; i < 3; i++) expect(await store.create(job(), 3)).toBe(true);
      expect(await store.create(job(), 3)).toBe(false);
      expect(await store.create(job({ tenantId: 't2' }), 3)).toBe(true); // another tenant's cap
      const [first] = await store.list('t1');
      expect(await store.cancel('t1', first.id)).toBe(true);
      expect(await store.create(job({ expiresAt: new Date(Date.now() + 150) }), 3)).toBe(true);
      expect(await store.create(job(), 3)).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(await store.count('t1')).toBe(2);
      expect(await store.create(job(), 3)).toBe(true);
      expect(await store.list('t1')).toHaveLength(4); // the expired one is listed until cancelled
    });

    it('refuses 40 of 60 concurrent creators under a cap of 20 (attack: count, then insert)', async () => {
      const made = await Promise.all(Array.from({ length: 60 }, () => store.create(job(), 20)));
      expect(made.filter(Boolean)).toHaveLength(20);
      expect(await store.count('t1')).toBe(20);
      expect(await store.list('t1')).toHaveLength(20);
    });

    it('an expired job is not active and fires no tick, nor a tick at or past its expiry', async () => {
      const soon = job({ expiresAt: new Date(Date.now() + 60_000) });
      await store.upsert(soon);
      expect(await store.claimTick(soon.id, new Date(soon.expiresAt!.getTime()))).toBe(false);
      expect(await store.claimTick(soon.id, new Date(Math.floor(Date.now() / 60_000) * 60_000))).toBe(true);
      const gone = job({ expiresAt: new Date(Date.now() + 150) });
      await store.upsert(gone);
      const minute = Math.floor(Date.now() / 60_000) * 60_000;
      expect(await store.claimTick(gone.id, new Date(minute - 60_000))).toBe(true); // before its expiry, never posted
      await new Promise((r) => setTimeout(r, 200));
      expect((await store.active()).map((j) => j.id)).toEqual([soon.id]);
      expect(await store.claimTick(gone.id, new Date(minute - 120_000))).toBe(false);
      // Its unposted tick is not posted after the expiry either; the live job's is.
      expect((await store.reclaimUnposted(0, 10)).map((r) => r.job.id)).toEqual([soon.id]);
      expect((await store.get('t1', gone.id))?.cancelledAt).toBeNull();
    });

    it('many concurrent claimers of one tick: exactly one wins', async () => {
      const j = job();
      await store.upsert(j);
      const tick = new Date('2026-01-01T10:00:00.000Z');
      const wins = await Promise.all(Array.from({ length: 40 }, () => store.claimTick(j.id, new Date(tick))));
      expect(wins.filter(Boolean)).toHaveLength(1);
    });

    it("claims a @Cron's tick once among 40 concurrent claimers, apart from a job's ticks, and never reclaims it", async () => {
      const tick = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
      const wins = await Promise.all(Array.from({ length: 40 }, () => store.claimCronTick('hourly-report', new Date(tick))));
      expect(wins.filter(Boolean)).toHaveLength(1);
      expect(await store.claimCronTick('hourly-report', tick)).toBe(false);
      // Another name, the next tick, and a job whose id is the name: each a claim of its own.
      expect(await store.claimCronTick('daily-report', tick)).toBe(true);
      expect(await store.claimCronTick('hourly-report', new Date(tick.getTime() + 60_000))).toBe(true);
      const j = job({ id: 'hourly-report' });
      await store.upsert(j);
      expect(await store.claimTick(j.id, tick)).toBe(true);
      // Unposted, but its goal lives in the application's code: no sync claims it again.
      await store.setTickRun(cronTickJobId('daily-report'), tick, 'run-1');
      await new Promise((r) => setTimeout(r, 20));
      const reclaimed = await store.reclaimUnposted(1, 10);
      expect(reclaimed.map((r) => [r.job.id, r.tick.toISOString()])).toEqual([[j.id, tick.toISOString()]]);
    });
  });
}
