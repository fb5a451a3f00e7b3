import { QuotaKey, TokenQuotaStore } from './token-quota.store';

/** Token counters in process memory: for tests and apps without a database. Lost on restart. */
export class InMemoryTokenQuotaStore implements TokenQuotaStore {
  private readonly counters = new Map<string, number>();

  async used(key: QuotaKey, period: string): Promise<number> {
    return this.counters.get(keyOf(key, period)) ?? 0;
  }

  async charge(key: QuotaKey, period: string, tokens: number): Promise<number> {
    const k = keyOf(key, period);
    const total = (this.counters.get(k) ?? 0) + tokens;
    this.counters.set(k, total);
    return total;
  }
}

function keyOf(key: QuotaKey, period: string): string {
  return JSON.stringify([key.tenantId, key.agent, period]);
}
