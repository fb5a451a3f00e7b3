import { MigrationInterface, QueryRunner } from 'typeorm';

/** Framework tables of @zmodu/guard: the audit log and the token usage counters. */
export class ZmoduGuard1764460800000 implements MigrationInterface {
  name = 'ZmoduGuard1764460800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_audit_log (
      id bigserial PRIMARY KEY,
      run_id text NOT NULL,
      agent text,
      tenant_id text,
      user_id text,
      skill text NOT NULL,
      action text NOT NULL,
      decision text NOT NULL,
      cause text,
      outcome text NOT NULL,
      duration_ms integer NOT NULL,
      tokens integer NOT NULL,
      at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_audit_log_run_idx ON zmodu_audit_log (run_id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_audit_log_tenant_at_idx ON zmodu_audit_log (tenant_id, at)`);
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_token_usage (
      tenant_id text NOT NULL,
      agent text NOT NULL,
      period text NOT NULL,
      tokens bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, agent, period)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_token_usage`);
    await q.query(`DROP TABLE IF EXISTS zmodu_audit_log`);
  }
}
