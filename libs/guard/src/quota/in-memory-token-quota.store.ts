import { QuotaKey, TokenQuotaStore } from './token-quota.store';

/** Token counters in process memory: for tests and apps without a database. Lost on restart. */
export class InMemoryTokenQuotaStore implements TokenQuotaStore {
  private readonly counters = new Map<string, number>();

  async used(key: QuotaKey, period: string): Promise<number> {
    return this.counters.get(keyOf(key, period, true)) ?? 0;
  }

  async charge(key: QuotaKey, period: string, tokens: number): Promise<number> {
    // No await between the two: both counters move together.
    const tenant = keyOf(key, period, false);
    const total = (this.counters.get(tenant) ?? 0) + tokens;
    this.counters.set(tenant, total);
    if (key.userId) {
      const user = keyOf(key, period, true);
      this.counters.set(user, (this.counters.get(user) ?? 0) + tokens);
    }
    return total;
  }
}

function keyOf(key: QuotaKey, period: string, withUser: boolean): string {
  return withUser && key.userId
    ? JSON.stringify([key.tenantId, key.agent, period, key.userId])
    : JSON.stringify([key.tenantId, key.agent, period]);
}
