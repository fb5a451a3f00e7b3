import { DataSource } from 'typeorm';
import { QuotaKey, TokenQuotaStore } from './token-quota.store';

/** The default quota store: table `zmodu_token_usage`, charged with one atomic upsert. */
export class TypeOrmTokenQuotaStore implements TokenQuotaStore {
  constructor(private readonly dataSource: DataSource) {}

  async used(key: QuotaKey, period: string): Promise<number> {
    const rows: Array<{ tokens: string }> = await this.dataSource.query(
      'SELECT tokens FROM zmodu_token_usage WHERE tenant_id = $1 AND agent = $2 AND period = $3',
      [key.tenantId, key.agent, period],
    );
    return rows.length === 0 ? 0 : Number(rows[0].tokens);
  }

  async charge(key: QuotaKey, period: string, tokens: number): Promise<number> {
    const rows: Array<{ tokens: string }> = await this.dataSource.query(
      `INSERT INTO zmodu_token_usage (tenant_id, agent, period, tokens, updated_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (tenant_id, agent, period)
       DO UPDATE SET tokens = zmodu_token_usage.tokens + EXCLUDED.tokens, updated_at = now()
       RETURNING tokens`,
      [key.tenantId, key.agent, period, Math.round(tokens)],
    );
    return Number(rows[0].tokens);
  }
}
