import { randomUUID } from 'node:crypto';
import type { AgentRunOutcome, AgentRunStore, NewAgentRun } from '../worker/worker.ports';

/** What a store factory gives the contract (the same shape as `@zmodu/outbox/testing`'s). */
export interface AgentRunStoreHarness {
  store: AgentRunStore;
  /** Release what the store holds (connections, files). */
  close?: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The shared cases every AgentRunStore must pass, in a describe() named `name`. The factory returns a fresh, empty
 * store. The cases include many concurrent claimers of one run and lease fencing with short leases and real
 * waits: run them on the database your store will use in production.
 */
export function agentRunStoreContract(name: string, factory: () => Promise<AgentRunStoreHarness>): void {
  describe(name, () => {
    let h: AgentRunStoreHarness;
    let store: AgentRunStore;
    beforeEach(async () => {
      h = await factory();
      store = h.store;
    });
    afterEach(async () => {
      await h.close?.();
    });

    const run = (over: Partial<NewAgentRun> = {}): NewAgentRun => ({
      id: randomUUID(),
      tenantId: 't1',
      userId: 'u1',
      permissions: ['market:read'],
      agent: 'trader',
      goal: 'quote AAPL',
      maxAttempts: 3,
      ...over,
    });
    const outcome = (over: Partial<AgentRunOutcome> = {}): AgentRunOutcome => ({
      status: 'succeeded',
      answer: 'done',
      stoppedReason: 'final',
      steps: [],
      pendingApprovals: [],
      error: null,
      ...over,
    });

    it('stores runs as queued, with their scope, in one batch', async () => {
      const a = run();
      const b = run({ tenantId: 't2', userId: 'u2', permissions: [] });
      await store.insert([a, b]);
      const got = await store.get('t1', a.id);
      expect(got).toMatchObject({
        id: a.id,
        tenantId: 't1',
        userId: 'u1',
        permissions: ['market:read'],
        agent: 'trader',
        goal: 'quote AAPL',
      });
      expect(got).toMatchObject({ status: 'queued', attempts: 0, maxAttempts: 3, answer: null, error: null, leaseOwner: null });
      expect(got?.createdAt).toBeInstanceOf(Date);
      expect(await store.countQueued()).toBe(2);
    });

    it('get is scoped to the tenant: another tenant, or an empty one, gets null', async () => {
      const a = run();
      await store.insert([a]);
      expect(await store.get('t2', a.id)).toBeNull();
      expect(await store.get('', a.id)).toBeNull();
      expect(await store.get('t1', randomUUID())).toBeNull();
      expect((await store.get('t1', a.id))?.id).toBe(a.id);
    });

    it('claim is exclusive: of 20 concurrent claimers exactly one wins', async () => {
      const a = run();
      await store.insert([a]);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim(a.id, `owner-${i}`, 5000)));
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ status: 'running', attempts: 1 });
      expect(winners[0]?.leaseUntil?.getTime()).toBeGreaterThan(Date.now());
      const stored = await store.get('t1', a.id);
      expect(stored?.leaseOwner).toBe(winners[0]?.leaseOwner);
      expect(await store.countQueued()).toBe(0);
      expect(await store.release(a.id, String(stored?.leaseOwner), 'shutdown')).toBe(true);
      expect(await store.countQueued()).toBe(1); // interrupted: waiting to start again
    });

    it('claim of an unknown or finished run is null', async () => {
      expect(await store.claim(randomUUID(), 'w1', 5000)).toBeNull();
      const a = run();
      await store.insert([a]);
      await store.claim(a.id, 'w1', 5000);
      expect(await store.finish(a.id, 'w1', outcome())).toBe(true);
      expect(await store.claim(a.id, 'w2', 5000)).toBeNull();
    });

    it('finish writes only for the lease owner', async () => {
      const a = run();
      await store.insert([a]);
      await store.claim(a.id, 'w1', 5000);
      expect(await store.finish(a.id, 'w2', outcome({ answer: 'stale' }))).toBe(false);
      expect(await store.release(a.id, 'w2', 'nope')).toBe(false);
      const steps = [{ step: 1, text: 'thinking', toolCalls: [] }] as unknown as AgentRunOutcome['steps'];
      expect(
        await store.finish(a.id, 'w1', outcome({ status: 'failed', answer: '', stoppedReason: 'model_error', error: 'boom', steps })),
      ).toBe(true);
      expect(await store.finish(a.id, 'w1', outcome())).toBe(false);
      expect(await store.get('t1', a.id)).toMatchObject({
        status: 'failed',
        stoppedReason: 'model_error',
        error: 'boom',
        steps,
        leaseOwner: null,
        leaseUntil: null,
      });
      expect((await store.get('t1', a.id))?.finishedAt).toBeInstanceOf(Date);
    });

    it('heartbeat renews held leases and reports the lost ones', async () => {
      const a = run();
      const b = run();
      await store.insert([a, b]);
      await store.claim(a.id, 'w1', 5000);
      await store.claim(b.id, 'w2', 5000);
      const before = (await store.get('t1', a.id))?.leaseUntil?.getTime() ?? 0;
      await sleep(20);
      const unknown = randomUUID();
      expect((await store.heartbeat('w1', [a.id, b.id, unknown], 60_000)).sort()).toEqual([b.id, unknown].sort());
      expect((await store.get('t1', a.id))?.leaseUntil?.getTime()).toBeGreaterThan(before + 30_000);
      expect(await store.heartbeat('w1', [], 1000)).toEqual([]);
    });

    it('release gives a running run back as interrupted; it can be claimed again', async () => {
      const a = run();
      await store.insert([a]);
      await store.claim(a.id, 'w1', 5000);
      expect(await store.release(a.id, 'w1', 'shutdown')).toBe(true);
      expect(await store.get('t1', a.id)).toMatchObject({ status: 'interrupted', leaseOwner: null, error: 'shutdown' });
      expect(await store.heartbeat('w1', [a.id], 5000)).toEqual([a.id]);
      expect(await store.claim(a.id, 'w2', 5000)).toMatchObject({ status: 'running', attempts: 2 });
    });

    it('recoverable returns queued and interrupted runs, and running ones whose lease expired (marked interrupted)', async () => {
      const queued = run();
      const interrupted = run();
      const expired = run();
      const live = run();
      const done = run();
      await store.insert([queued]);
      await store.insert([interrupted, expired, live, done]);
      await store.claim(interrupted.id, 'w1', 5000);
      await store.release(interrupted.id, 'w1', 'shutdown');
      await store.claim(expired.id, 'dead', 50);
      await store.claim(live.id, 'w1', 60_000);
      await store.claim(done.id, 'w1', 60_000);
      await store.finish(done.id, 'w1', outcome());
      await sleep(120);
      const ids = await store.recoverable(100);
      expect([...ids].sort()).toEqual([queued.id, interrupted.id, expired.id].sort());
      expect(ids[0]).toBe(queued.id);
      expect(await store.get('t1', expired.id)).toMatchObject({ status: 'interrupted', leaseOwner: null });
      expect((await store.get('t1', live.id))?.status).toBe('running');
      expect(await store.finish(expired.id, 'dead', outcome())).toBe(false);
      expect(await store.recoverable(1)).toHaveLength(1);
      expect(await store.recoverable(0)).toEqual([]);
    });

    it('a graceful release gives the start back: maxAttempts + 1 (a deploy is not the run failing)', async () => {
      const a = run({ maxAttempts: 1 });
      await store.insert([a]);
      for (const owner of ['w1', 'w2', 'w3']) {
        expect(await store.claim(a.id, owner, 5000)).toMatchObject({ status: 'running' });
        expect(await store.release(a.id, owner, 'shutdown')).toBe(true);
      }
      expect(await store.get('t1', a.id)).toMatchObject({ status: 'interrupted', attempts: 3, maxAttempts: 4 });
      expect(await store.claim(a.id, 'w4', 5000)).toMatchObject({ status: 'running', attempts: 4 });
    });

    it('a run out of attempts is marked failed at its next claim, returned (status failed) to exactly one claimer', async () => {
      const a = run({ maxAttempts: 2 });
      await store.insert([a]);
      for (const owner of ['w1', 'w2']) {
        // Its instance dies: the lease expires and a sweep marks it interrupted (a crash uses the start).
        expect(await store.claim(a.id, owner, 1)).not.toBeNull();
        await new Promise((r) => setTimeout(r, 10));
        expect(await store.recoverable(10)).toContain(a.id);
      }
      const claims = await Promise.all(['w3', 'w4', 'w5', 'w6'].map((owner) => store.claim(a.id, owner, 5000)));
      const reported = claims.filter((c) => c !== null);
      expect(reported).toHaveLength(1);
      expect(reported[0]).toMatchObject({ id: a.id, status: 'failed', attempts: 2, leaseOwner: null });
      expect(await store.claim(a.id, 'w7', 5000)).toBeNull();
      const got = await store.get('t1', a.id);
      expect(got).toMatchObject({ status: 'failed', attempts: 2 });
      expect(got?.error).toMatch(/maxAttempts/);
      expect(await store.recoverable(10)).toEqual([]);
    });
  });
}
