import { MigrationInterface, QueryRunner } from 'typeorm';

/** Issue 10: the audit dead letters (entries the store refused on their own) and the per-user token counters. */
export class ZmoduGuardFairUse1764500000000 implements MigrationInterface {
  name = 'ZmoduGuardFairUse1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_audit_dead_letters (
      id bigserial PRIMARY KEY,
      entry text NOT NULL,
      error text NOT NULL,
      at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_token_usage_users (
      tenant_id text NOT NULL,
      agent text NOT NULL,
      user_id text NOT NULL,
      period text NOT NULL,
      tokens bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, agent, user_id, period)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_token_usage_users`);
    await q.query(`DROP TABLE IF EXISTS zmodu_audit_dead_letters`);
  }
}
