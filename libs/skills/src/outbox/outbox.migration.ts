import { MigrationInterface, QueryRunner } from 'typeorm';

/** The transactional outbox and the command idempotency keys of @zmodu/skills. */
export class ZmoduOutbox1764461300000 implements MigrationInterface {
  name = 'ZmoduOutbox1764461300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_outbox (
      id uuid PRIMARY KEY,
      tenant_id text,
      topic text NOT NULL,
      payload jsonb NOT NULL,
      idempotency_key text,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivering', 'delivered', 'dead')),
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_owner text,
      lease_token bigint NOT NULL DEFAULT 0,
      lease_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz
    )`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_outbox_due_idx ON zmodu_outbox (next_attempt_at) WHERE status IN ('pending', 'delivering')`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_outbox_status_idx ON zmodu_outbox (tenant_id, status, created_at)`);
    await q.query(`CREATE UNIQUE INDEX IF NOT EXISTS zmodu_outbox_key_idx ON zmodu_outbox (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_outbox`);
  }
}

export const ZMODU_OUTBOX_MIGRATIONS = [ZmoduOutbox1764461300000];
