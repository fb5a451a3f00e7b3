import { DataSource } from 'typeorm';
import { isRowRefused } from '@zmodu/core';
import {
  MAX_CHARGE_TOKENS,
  QuotaAdmission,
  QuotaAdmitLimits,
  QuotaKey,
  QuotaUsageFilter,
  QuotaUsageRow,
  quotaUsageLimit,
  TokenQuotaStore,
} from './token-quota.store';

/**
 * The default quota store: tables `zmodu_token_usage` (per tenant and agent) and
 * `zmodu_token_usage_users` (per user of a tenant), charged with one atomic statement.
 */
export class TypeOrmTokenQuotaStore implements TokenQuotaStore {
  constructor(private readonly dataSource: DataSource) {}

  async used(key: QuotaKey, period: string): Promise<number> {
    const rows: Array<{ tokens: string }> = key.userId
      ? await this.dataSource.query(
          'SELECT tokens FROM zmodu_token_usage_users WHERE tenant_id = $1 AND agent = $2 AND user_id = $3 AND period = $4',
          [key.tenantId, key.agent, key.userId, period],
        )
      : await this.dataSource.query('SELECT tokens FROM zmodu_token_usage WHERE tenant_id = $1 AND agent = $2 AND period = $3', [
          key.tenantId,
          key.agent,
          period,
        ]);
    return rows.length === 0 ? 0 : Number(rows[0].tokens);
  }

  /** A charge PostgreSQL refused for what it holds (a NUL in a name): see isRowRefused. */
  refusesCharge(err: unknown): boolean {
    return isRowRefused(err);
  }

  async charge(key: QuotaKey, period: string, tokens: number): Promise<number> {
    // A counter saturates at MAX_CHARGE_TOKENS: no sum of charges overflows the column (a refused write would lose it).
    const tenantUpsert = `INSERT INTO zmodu_token_usage (tenant_id, agent, period, tokens, updated_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (tenant_id, agent, period)
       DO UPDATE SET tokens = LEAST(zmodu_token_usage.tokens + EXCLUDED.tokens, ${MAX_CHARGE_TOKENS}), updated_at = now()
       RETURNING tokens`;
    if (!key.userId) {
      const rows: Array<{ tokens: string }> = await this.dataSource.query(tenantUpsert, [
        key.tenantId,
        key.agent,
        period,
        Math.round(tokens),
      ]);
      return Number(rows[0].tokens);
    }
    // One statement, two upserts: the tenant row and the user row move together or not at all.
    const rows: Array<{ tenant: string; user: string }> = await this.dataSource.query(
      `WITH t AS (${tenantUpsert}),
       u AS (
         INSERT INTO zmodu_token_usage_users (tenant_id, agent, user_id, period, tokens, updated_at)
         VALUES ($1, $2, $5, $3, $4, now())
         ON CONFLICT (tenant_id, agent, user_id, period)
         DO UPDATE SET tokens = LEAST(zmodu_token_usage_users.tokens + EXCLUDED.tokens, ${MAX_CHARGE_TOKENS}), updated_at = now()
         RETURNING tokens
       )
       SELECT t.tokens AS tenant, u.tokens AS "user" FROM t, u`,
      [key.tenantId, key.agent, period, Math.round(tokens), key.userId],
    );
    return Number(rows[0].tenant);
  }

  /**
   * The counters' rows (created at 0 if missing) locked FOR UPDATE, tenant first then user (the order `charge` writes
   * them in), compared with the limits, and charged in the same transaction.
   */
  async admit(key: QuotaKey, period: string, tokens: number, limits: QuotaAdmitLimits): Promise<QuotaAdmission> {
    const add = Math.round(tokens);
    return this.dataSource.transaction(async (m) => {
      const t = [key.tenantId, key.agent, period];
      await m.query(
        `INSERT INTO zmodu_token_usage (tenant_id, agent, period, tokens, updated_at) VALUES ($1, $2, $3, 0, now()) ON CONFLICT DO NOTHING`,
        t,
      );
      const [tenant]: Array<{ tokens: string }> = await m.query(
        'SELECT tokens FROM zmodu_token_usage WHERE tenant_id = $1 AND agent = $2 AND period = $3 FOR UPDATE',
        t,
      );
      const before = Number(tenant.tokens);
      if (before >= limits.tenant) return { admitted: false, tenant: before, user: null };
      let userAfter: number | null = null;
      if (key.userId) {
        const u = [key.tenantId, key.agent, key.userId, period];
        await m.query(
          `INSERT INTO zmodu_token_usage_users (tenant_id, agent, user_id, period, tokens, updated_at) VALUES ($1, $2, $3, $4, 0, now())
           ON CONFLICT DO NOTHING`,
          u,
        );
        const [user]: Array<{ tokens: string }> = await m.query(
          'SELECT tokens FROM zmodu_token_usage_users WHERE tenant_id = $1 AND agent = $2 AND user_id = $3 AND period = $4 FOR UPDATE',
          u,
        );
        if (Number(user.tokens) >= limits.user) return { admitted: false, tenant: before, user: Number(user.tokens) };
        const [after]: Array<{ tokens: string }> = await m.query(
          `WITH a AS (UPDATE zmodu_token_usage_users SET tokens = LEAST(tokens + $5, ${MAX_CHARGE_TOKENS}), updated_at = now()
           WHERE tenant_id = $1 AND agent = $2 AND user_id = $3 AND period = $4 RETURNING tokens) SELECT tokens FROM a`,
          [...u, add],
        );
        userAfter = Number(after.tokens);
      }
      const [after]: Array<{ tokens: string }> = await m.query(
        `WITH a AS (UPDATE zmodu_token_usage SET tokens = LEAST(tokens + $4, ${MAX_CHARGE_TOKENS}), updated_at = now()
         WHERE tenant_id = $1 AND agent = $2 AND period = $3 RETURNING tokens) SELECT tokens FROM a`,
        [...t, add],
      );
      return { admitted: true, tenant: Number(after.tokens), user: userAfter };
    });
  }

  async usage(tenantId: string, filter: QuotaUsageFilter = {}): Promise<QuotaUsageRow[]> {
    const params: unknown[] = [tenantId, filter.agent ?? null, filter.period ?? null];
    const where = 'tenant_id = $1 AND ($2::text IS NULL OR agent = $2) AND ($3::text IS NULL OR period = $3)';
    const rows: Array<{ agent: string; period: string; tokens: string }> = await this.dataSource.query(
      `SELECT agent, period, tokens FROM zmodu_token_usage WHERE ${where}
       ORDER BY period COLLATE "C" DESC, agent COLLATE "C" ASC LIMIT ${quotaUsageLimit(filter)}`,
      params,
    );
    if (rows.length === 0) return [];
    // The users' counters of the rows listed (one statement: the rows' (agent, period) pairs as two arrays).
    const users: Array<{ agent: string; period: string; user_id: string; tokens: string }> = await this.dataSource.query(
      `SELECT u.agent, u.period, u.user_id, u.tokens FROM zmodu_token_usage_users u
       JOIN unnest($2::text[], $3::text[]) AS r(agent, period) ON r.agent = u.agent AND r.period = u.period
       WHERE u.tenant_id = $1 ORDER BY u.tokens DESC, u.user_id COLLATE "C" ASC`,
      [tenantId, rows.map((r) => r.agent), rows.map((r) => r.period)],
    );
    const byRow = new Map<string, Array<{ userId: string; tokens: number }>>();
    for (const u of users) {
      const key = JSON.stringify([u.agent, u.period]);
      const list = byRow.get(key) ?? [];
      list.push({ userId: u.user_id, tokens: Number(u.tokens) });
      byRow.set(key, list);
    }
    return rows.map((r) => ({
      tenantId,
      agent: r.agent,
      period: r.period,
      tokens: Number(r.tokens),
      users: byRow.get(JSON.stringify([r.agent, r.period])) ?? [],
    }));
  }
}
