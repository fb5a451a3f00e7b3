import { TokenQuotaStore } from '../quota/token-quota.store';
import { StoreHarness } from './audit-log-store.contract';

/** The shared cases every TokenQuotaStore must pass, given a factory of fresh, empty stores. */
export function tokenQuotaStoreContract(factory: () => Promise<StoreHarness<TokenQuotaStore>>): void {
  let h: StoreHarness<TokenQuotaStore>;
  beforeEach(async () => {
    h = await factory();
  });
  afterEach(async () => {
    await h.close?.();
  });

  it('starts at zero and adds charges', async () => {
    const key = { tenantId: 't1', agent: 'trader' };
    expect(await h.store.used(key, '2026-11-30')).toBe(0);
    expect(await h.store.charge(key, '2026-11-30', 100)).toBe(100);
    expect(await h.store.charge(key, '2026-11-30', 23)).toBe(123);
    expect(await h.store.used(key, '2026-11-30')).toBe(123);
  });

  it('keeps tenants, agents and periods apart', async () => {
    await h.store.charge({ tenantId: 't1', agent: 'trader' }, 'p', 5);
    await h.store.charge({ tenantId: 't2', agent: 'trader' }, 'p', 7);
    await h.store.charge({ tenantId: 't1', agent: 'analyst' }, 'p', 11);
    await h.store.charge({ tenantId: 't1', agent: 'trader' }, 'q', 13);
    expect(await h.store.used({ tenantId: 't1', agent: 'trader' }, 'p')).toBe(5);
    expect(await h.store.used({ tenantId: 't2', agent: 'trader' }, 'p')).toBe(7);
    expect(await h.store.used({ tenantId: 't1', agent: 'analyst' }, 'p')).toBe(11);
    expect(await h.store.used({ tenantId: 't1', agent: 'trader' }, 'q')).toBe(13);
  });

  it('admit: 60 admissions at once of 10 tokens under a limit of 100 admit 10, for the tenant and for a user (attack: read, then charge)', async () => {
    if (!h.store.admit) return expect(h.store.admit).toBeUndefined(); // optional: TokenQuota then reads and charges after
    const admit = h.store.admit.bind(h.store);
    const tenant = { tenantId: 't1', agent: 'trader' };
    const admitted = await Promise.all(Array.from({ length: 60 }, () => admit(tenant, 'p', 10, { tenant: 100, user: Infinity })));
    expect(admitted.filter((a) => a.admitted)).toHaveLength(10);
    expect(await h.store.used(tenant, 'p')).toBe(100);
    expect(admitted.filter((a) => !a.admitted).every((a) => a.tenant >= 100)).toBe(true);
    // A user's share: the user's counter decides, and both counters move together.
    const alice = { tenantId: 't2', agent: 'trader', userId: 'alice' };
    const byUser = await Promise.all(Array.from({ length: 30 }, () => admit(alice, 'p', 5, { tenant: 1000, user: 20 })));
    expect(byUser.filter((a) => a.admitted)).toHaveLength(4);
    expect([await h.store.used(alice, 'p'), await h.store.used({ tenantId: 't2', agent: 'trader' }, 'p')]).toEqual([20, 20]);
    expect(await admit({ tenantId: 't3', agent: 'trader' }, 'p', 1, { tenant: 0, user: Infinity })).toMatchObject({ admitted: false });
    expect(await h.store.used({ tenantId: 't3', agent: 'trader' }, 'p')).toBe(0);
  });

  it('loses no charge under concurrent charging', async () => {
    const key = { tenantId: 't1', agent: 'trader' };
    await Promise.all(Array.from({ length: 20 }, () => h.store.charge(key, 'p', 3)));
    expect(await h.store.used(key, 'p')).toBe(60);
  });

  it('charges the tenant and the user together, and keeps users and their tenant apart', async () => {
    const alice = { tenantId: 't1', agent: 'trader', userId: 'alice' };
    const bob = { tenantId: 't1', agent: 'trader', userId: 'bob' };
    expect(await h.store.charge(alice, 'p', 10)).toBe(10);
    expect(await h.store.charge(bob, 'p', 5)).toBe(15);
    expect(await h.store.charge({ tenantId: 't1', agent: 'trader' }, 'p', 1)).toBe(16);
    expect(await h.store.used(alice, 'p')).toBe(10);
    expect(await h.store.used(bob, 'p')).toBe(5);
    expect(await h.store.used({ tenantId: 't1', agent: 'trader' }, 'p')).toBe(16);
    expect(await h.store.used({ tenantId: 't2', agent: 'trader', userId: 'alice' }, 'p')).toBe(0);
    expect(await h.store.used({ tenantId: 't1', agent: 'trader', userId: 'alice' }, 'q')).toBe(0);
    expect(await h.store.used({ tenantId: 't1', agent: 'analyst', userId: 'alice' }, 'p')).toBe(0);
  });

  it('treats a null or empty user as no user', async () => {
    await h.store.charge({ tenantId: 't1', agent: 'a', userId: null }, 'p', 4);
    await h.store.charge({ tenantId: 't1', agent: 'a', userId: '' }, 'p', 3);
    expect(await h.store.used({ tenantId: 't1', agent: 'a' }, 'p')).toBe(7);
    expect(await h.store.used({ tenantId: 't1', agent: 'a', userId: null }, 'p')).toBe(7);
  });

  it('loses no charge of the tenant or its users under many concurrent charges', async () => {
    const users = ['u1', 'u2', 'u3', 'u4'];
    await Promise.all(Array.from({ length: 80 }, (_, i) => h.store.charge({ tenantId: 't1', agent: 'a', userId: users[i % 4] }, 'p', 2)));
    expect(await h.store.used({ tenantId: 't1', agent: 'a' }, 'p')).toBe(160);
    for (const userId of users) expect(await h.store.used({ tenantId: 't1', agent: 'a', userId }, 'p')).toBe(40);
  });

  it('keeps counters of tenants and users named like Object.prototype members', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(await h.store.used({ tenantId: name, agent: name, userId: name }, name)).toBe(0);
      expect(await h.store.used({ tenantId: name, agent: name }, name)).toBe(0);
      expect(await h.store.charge({ tenantId: name, agent: 'a', userId: name }, 'p', 9)).toBe(9);
      expect(await h.store.used({ tenantId: name, agent: 'a', userId: name }, 'p')).toBe(9);
    }
  });

  describe('usage (optional: a store without it is answered 501 by GET /admin/quota)', () => {
    const usage = (tenantId: string, filter?: Parameters<NonNullable<TokenQuotaStore['usage']>>[1]) => {
      if (!h.store.usage) throw new Error('this store has no usage method: leave these cases out');
      return h.store.usage(tenantId, filter);
    };

    it("lists one tenant's counters, newest period first then by agent, each with its users (most tokens first)", async () => {
      if (!h.store.usage) return expect(h.store.usage).toBeUndefined();
      await h.store.charge({ tenantId: 't1', agent: 'trader', userId: 'alice' }, '2026-11-30', 10);
      await h.store.charge({ tenantId: 't1', agent: 'trader', userId: 'bob' }, '2026-11-30', 25);
      await h.store.charge({ tenantId: 't1', agent: 'trader' }, '2026-11-30', 1);
      await h.store.charge({ tenantId: 't1', agent: 'analyst' }, '2026-11-30', 4);
      await h.store.charge({ tenantId: 't1', agent: 'trader' }, '2026-11-29', 7);
      await h.store.charge({ tenantId: 't2', agent: 'trader', userId: 'carol' }, '2026-11-30', 99);
      expect(await usage('t1')).toEqual([
        { tenantId: 't1', agent: 'analyst', period: '2026-11-30', tokens: 4, users: [] },
        {
          tenantId: 't1',
          agent: 'trader',
          period: '2026-11-30',
          tokens: 36,
          users: [
            { userId: 'bob', tokens: 25 },
            { userId: 'alice', tokens: 10 },
          ],
        },
        { tenantId: 't1', agent: 'trader', period: '2026-11-29', tokens: 7, users: [] },
      ]);
      expect(await usage('t2')).toEqual([
        { tenantId: 't2', agent: 'trader', period: '2026-11-30', tokens: 99, users: [{ userId: 'carol', tokens: 99 }] },
      ]);
      expect(await usage('t3')).toEqual([]);
    });

    it('filters by agent and period, and caps the rows', async () => {
      if (!h.store.usage) return expect(h.store.usage).toBeUndefined();
      for (const agent of ['a', 'b', 'c']) for (const period of ['p1', 'p2']) await h.store.charge({ tenantId: 't1', agent }, period, 1);
      expect((await usage('t1', { agent: 'b' })).map((r) => [r.agent, r.period])).toEqual([
        ['b', 'p2'],
        ['b', 'p1'],
      ]);
      expect((await usage('t1', { period: 'p1' })).map((r) => r.agent)).toEqual(['a', 'b', 'c']);
      expect((await usage('t1', { agent: 'c', period: 'p2' })).map((r) => r.tokens)).toEqual([1]);
      expect((await usage('t1', { limit: 2 })).map((r) => [r.agent, r.period])).toEqual([
        ['a', 'p2'],
        ['b', 'p2'],
      ]);
    });

    it('finds tenants and agents named like Object.prototype members, and only them', async () => {
      if (!h.store.usage) return expect(h.store.usage).toBeUndefined();
      await h.store.charge({ tenantId: 'constructor', agent: '__proto__' }, 'p', 3);
      expect(await usage('constructor')).toEqual([{ tenantId: 'constructor', agent: '__proto__', period: 'p', tokens: 3, users: [] }]);
      expect(await usage('toString')).toEqual([]);
    });
  });
}
