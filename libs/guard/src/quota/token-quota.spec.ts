import { InMemoryTokenQuotaStore } from './in-memory-token-quota.store';
import { TokenQuota } from './token-quota';

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
});
