import {
  compareUsageRows,
  MAX_CHARGE_TOKENS,
  QuotaAdmission,
  QuotaAdmitLimits,
  QuotaKey,
  QuotaUsageFilter,
  QuotaUsageRow,
  quotaUsageLimit,
  TokenQuotaStore,
} from './token-quota.store';

/** Token counters in process memory: for tests and apps without a database. Lost on restart. */
export class InMemoryTokenQuotaStore implements TokenQuotaStore {
  private readonly counters = new Map<string, number>();

  async used(key: QuotaKey, period: string): Promise<number> {
    return this.counters.get(keyOf(key, period, true)) ?? 0;
  }

  async charge(key: QuotaKey, period: string, tokens: number): Promise<number> {
    // No await between the two: both counters move together.
    const tenant = keyOf(key, period, false);
    const total = Math.min((this.counters.get(tenant) ?? 0) + tokens, MAX_CHARGE_TOKENS);
    this.counters.set(tenant, total);
    if (key.userId) {
      const user = keyOf(key, period, true);
      this.counters.set(user, Math.min((this.counters.get(user) ?? 0) + tokens, MAX_CHARGE_TOKENS));
    }
    return total;
  }

  async admit(key: QuotaKey, period: string, tokens: number, limits: QuotaAdmitLimits): Promise<QuotaAdmission> {
    // No await between the reads and the charge: admissions at once are taken one after the other.
    const counters = () => ({
      tenant: this.counters.get(keyOf(key, period, false)) ?? 0,
      user: key.userId ? (this.counters.get(keyOf(key, period, true)) ?? 0) : null,
    });
    const now = counters();
    if (now.tenant >= limits.tenant || (now.user !== null && now.user >= limits.user)) return { admitted: false, ...now };
    await this.charge(key, period, tokens);
    return { admitted: true, ...counters() };
  }

  async usage(tenantId: string, filter: QuotaUsageFilter = {}): Promise<QuotaUsageRow[]> {
    const rows = new Map<string, { agent: string; period: string; tokens: number; users: Array<{ userId: string; tokens: number }> }>();
    const users: Array<[agent: string, period: string, userId: string, tokens: number]> = [];
    for (const [key, tokens] of this.counters) {
      const [tenant, agent, period, userId] = JSON.parse(key) as [string, string, string, string?];
      if (tenant !== tenantId || (filter.agent !== undefined && agent !== filter.agent)) continue;
      if (filter.period !== undefined && period !== filter.period) continue;
      if (userId === undefined) rows.set(JSON.stringify([agent, period]), { agent, period, tokens, users: [] });
      else users.push([agent, period, userId, tokens]);
    }
    for (const [agent, period, userId, tokens] of users) rows.get(JSON.stringify([agent, period]))?.users.push({ userId, tokens });
    return [...rows.values()]
      .sort(compareUsageRows)
      .slice(0, quotaUsageLimit(filter))
      .map((r) => ({ tenantId, ...r, users: r.users.sort((a, b) => b.tokens - a.tokens || (a.userId < b.userId ? -1 : 1)) }));
  }
}

function keyOf(key: QuotaKey, period: string, withUser: boolean): string {
  return withUser && key.userId
    ? JSON.stringify([key.tenantId, key.agent, period, key.userId])
    : JSON.stringify([key.tenantId, key.agent, period]);
}
