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

  it('loses no charge under concurrent charging', async () => {
    const key = { tenantId: 't1', agent: 'trader' };
    await Promise.all(Array.from({ length: 20 }, () => h.store.charge(key, 'p', 3)));
    expect(await h.store.used(key, 'p')).toBe(60);
  });
}
