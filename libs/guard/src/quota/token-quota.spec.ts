import { InMemoryTokenQuotaStore } from './in-memory-token-quota.store';
import { TokenQuota } from './token-quota';
import { QuotaKey } from './token-quota.store';

/** A store that fails while `down`, as when the database is unreachable. */
class OutageStore extends InMemoryTokenQuotaStore {
  down = false;
  override async used(key: QuotaKey, period: string) {
    if (this.down) throw new Error('connect ECONNREFUSED');
    return super.used(key, period);
  }
  override async charge(key: QuotaKey, period: string, tokens: number) {
    if (this.down) throw new Error('connect ECONNREFUSED');
    return super.charge(key, period, tokens);
  }
}

describe('TokenQuota', () => {
  const key = { tenantId: 't1', agent: 'trader' };

  it('allows without limit and without reading the store', async () => {
    const store = new InMemoryTokenQuotaStore();
    const spy = jest.spyOn(store, 'used');
    const q = new TokenQuota(store);
    expect((await q.check(key)).allowed).toBe(true);
    expect(spy).not.toHaveBeenCalled();
  });

  it('refuses once the period limit is used up', async () => {
    const q = new TokenQuota(new InMemoryTokenQuotaStore(), { defaultLimit: 100 });
    await q.charge(key, 60);
    expect(await q.check(key)).toMatchObject({ allowed: true, used: 60, remaining: 40 });
    await q.charge(key, 40);
    expect(await q.check(key)).toMatchObject({ allowed: false, used: 100, remaining: 0 });
    expect((await q.check({ tenantId: 't2', agent: 'trader' })).allowed).toBe(true);
  });

  it('uses an agent limit over the default', async () => {
    const q = new TokenQuota(new InMemoryTokenQuotaStore(), { defaultLimit: 1000 });
    q.setAgentLimit('trader', 10);
    await q.charge(key, 10);
    expect((await q.check(key)).allowed).toBe(false);
    expect((await q.check({ tenantId: 't1', agent: 'other' })).allowed).toBe(true);
  });

  it('starts a new day with a fresh count', async () => {
    let now = new Date('2026-11-30T23:59:00Z');
    const q = new TokenQuota(new InMemoryTokenQuotaStore(), { defaultLimit: 10, period: 'day' }, () => now);
    await q.charge(key, 10);
    expect((await q.check(key)).allowed).toBe(false);
    now = new Date('2026-12-01T00:01:00Z');
    expect((await q.check(key)).allowed).toBe(true);
    expect(q.currentPeriod()).toBe('2026-12-01');
  });

  it('rejects bad limits and charges', async () => {
    const q = new TokenQuota(new InMemoryTokenQuotaStore());
    expect(() => q.setAgentLimit('a', -1)).toThrow(RangeError);
    await expect(q.charge(key, Number.NaN)).rejects.toThrow(RangeError);
    expect(() => new TokenQuota(new InMemoryTokenQuotaStore(), { defaultLimit: -5 })).toThrow(RangeError);
  });

  describe('per-user shares (fair use)', () => {
    const alice = { tenantId: 't1', agent: 'trader', userId: 'alice' };
    const bob = { tenantId: 't1', agent: 'trader', userId: 'bob' };

    it('stops a user at a fraction of the tenant budget and says which budget ran out', async () => {
      const q = new TokenQuota(new InMemoryTokenQuotaStore(), { defaultLimit: 100, userShare: 0.25 });
      await q.charge(alice, 20);
      expect(await q.check(alice)).toMatchObject({
        allowed: true,
        exhausted: null,
        used: 20,
        remaining: 5,
        user: { userId: 'alice', used: 20, limit: 25, remaining: 5 },
      });
      await q.charge(alice, 5);
      expect(await q.check(alice)).toMatchObject({ allowed: false, exhausted: 'user', used: 25, remaining: 0 });
      expect(await q.check(bob)).toMatchObject({ allowed: true, exhausted: null });
      await q.charge(bob, 25);
      await q.charge({ tenantId: 't1', agent: 'trader', userId: 'carol' }, 25);
      await q.charge({ tenantId: 't1', agent: 'trader', userId: 'dan' }, 25);
      expect(await q.check({ tenantId: 't1', agent: 'trader', userId: 'erin' })).toMatchObject({
        allowed: false,
        exhausted: 'tenant',
        used: 100,
      });
      // Without a user, only the tenant budget applies.
      expect((await q.check({ tenantId: 't1', agent: 'trader' })).exhausted).toBe('tenant');
    });

    it('stops a user at an amount, the smaller of share and amount applying, per agent over the default', async () => {
      const q = new TokenQuota(new InMemoryTokenQuotaStore(), { defaultLimit: 1000, userLimit: 50 });
      await q.charge(alice, 50);
      expect((await q.check(alice)).exhausted).toBe('user');
      q.setAgentUserShare('trader', { userShare: 0.5, userLimit: 80 });
      expect(q.userLimitFor(alice)).toBe(80);
      q.setAgentLimit('trader', 100);
      expect(q.userLimitFor(alice)).toBe(50);
      expect((await q.check(alice)).exhausted).toBe('user');
      q.setAgentUserShare('trader', undefined);
      expect(q.userLimitFor(alice)).toBe(50);
      expect(() => q.setAgentUserShare('trader', { userShare: 0 })).toThrow(RangeError);
      expect(() => q.setAgentUserShare('trader', { userShare: 1.5 })).toThrow(RangeError);
      expect(() => new TokenQuota(new InMemoryTokenQuotaStore(), { userLimit: -1 })).toThrow(RangeError);
    });

    it('keeps users named like Object.prototype members apart', async () => {
      const q = new TokenQuota(new InMemoryTokenQuotaStore(), { defaultLimit: 100, userLimit: 10 });
      const proto = { tenantId: '__proto__', agent: 'trader', userId: 'constructor' };
      expect(await q.check(proto)).toMatchObject({ allowed: true, used: 0 });
      await q.charge(proto, 10);
      expect((await q.check(proto)).exhausted).toBe('user');
      expect((await q.check({ tenantId: '__proto__', agent: 'trader', userId: '__proto__' })).allowed).toBe(true);
    });
  });

  describe('charges the store refuses', () => {
    it('queues them during an outage and writes them all once the store is back: usage is not under-counted', async () => {
      const store = new OutageStore();
      const q = new TokenQuota(store, { defaultLimit: 10_000, retryIntervalMs: 60_000 });
      store.down = true;
      for (let i = 0; i < 50; i++) await q.chargeQuietly({ ...key, userId: i % 2 ? 'alice' : 'bob' }, 10);
      expect(q.metrics()).toMatchObject({ queuedCharges: 50, pendingCharges: 2, pendingTokens: 500, droppedCharges: 0 });
      await expect(q.flushCharges()).rejects.toThrow('ECONNREFUSED');
      store.down = false;
      // Queued tokens count as used before they reach the store.
      expect((await q.check(key)).used).toBe(500);
      await q.flushCharges();
      expect(await store.used(key, q.currentPeriod())).toBe(500);
      expect(await store.used({ ...key, userId: 'alice' }, q.currentPeriod())).toBe(250);
      expect(q.metrics()).toMatchObject({ pendingCharges: 0, pendingTokens: 0, retriedCharges: 2 });
      await q.close();
    });

    it('retries on its own with backoff', async () => {
      const store = new OutageStore();
      const q = new TokenQuota(store, { retryIntervalMs: 5 });
      store.down = true;
      await q.chargeQuietly(key, 7);
      setTimeout(() => (store.down = false), 30);
      for (let i = 0; i < 100 && (await store.used(key, q.currentPeriod()).catch(() => 0)) === 0; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(await store.used(key, q.currentPeriod())).toBe(7);
      expect(q.metrics().pendingCharges).toBe(0);
      await q.close();
    });

    it('charges a queued charge to the period it was used in', async () => {
      let now = new Date('2026-11-30T23:59:00Z');
      const store = new OutageStore();
      const q = new TokenQuota(store, { period: 'day', retryIntervalMs: 60_000 }, () => now);
      store.down = true;
      await q.chargeQuietly(key, 9);
      now = new Date('2026-12-01T00:01:00Z');
      store.down = false;
      await q.flushCharges();
      expect(await store.used(key, '2026-11-30')).toBe(9);
      expect(await store.used(key, '2026-12-01')).toBe(0);
      await q.close();
    });

    it('drops the oldest past maxPendingCharges, and counts them', async () => {
      const store = new OutageStore();
      const q = new TokenQuota(store, { maxPendingCharges: 2, retryIntervalMs: 60_000 });
      store.down = true;
      for (const t of ['a', 'b', 'c']) await q.chargeQuietly({ tenantId: t, agent: 'x' }, 5);
      expect(q.metrics()).toMatchObject({ pendingCharges: 2, droppedCharges: 1, droppedTokens: 5 });
      store.down = false;
      await q.flushCharges();
      expect(await store.used({ tenantId: 'a', agent: 'x' }, q.currentPeriod())).toBe(0);
      expect(await store.used({ tenantId: 'c', agent: 'x' }, q.currentPeriod())).toBe(5);
      await q.close();
    });

    it('close() flushes the queue, and counts what it could not write', async () => {
      const store = new OutageStore();
      const q = new TokenQuota(store, { retryIntervalMs: 1, closeAttempts: 2 });
      store.down = true;
      await q.chargeQuietly(key, 3);
      await q.close();
      expect(q.metrics()).toMatchObject({ pendingCharges: 0, droppedCharges: 1, droppedTokens: 3 });

      const store2 = new OutageStore();
      const q2 = new TokenQuota(store2, { retryIntervalMs: 60_000 });
      store2.down = true;
      await q2.chargeQuietly(key, 4);
      store2.down = false;
      await q2.close();
      expect(await store2.used(key, q2.currentPeriod())).toBe(4);
      expect(q2.metrics().droppedCharges).toBe(0);
    });
  });
});
