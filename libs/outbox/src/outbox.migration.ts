import { registerMigrations } from '@zmodu/core';
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
    await q.query(
      `CREATE INDEX IF NOT EXISTS zmodu_outbox_due_idx ON zmodu_outbox (next_attempt_at) WHERE status IN ('pending', 'delivering')`,
    );
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_outbox_status_idx ON zmodu_outbox (tenant_id, status, created_at)`);
    await q.query(
      `CREATE UNIQUE INDEX IF NOT EXISTS zmodu_outbox_key_idx ON zmodu_outbox (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_outbox`);
  }
}

/**
 * command.execute keeps with its event the command's name and the hash of its name and canonical
 * arguments: the same key with another command or other arguments is a conflict, not a replay.
 * Its keys are now scoped to tenant, user and agent (see `commandKey`); keys written before this
 * migration (tenant and run id only) no longer match a new call.
 */
export class ZmoduOutboxCommandStamp1764470000000 implements MigrationInterface {
  name = 'ZmoduOutboxCommandStamp1764470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_outbox ADD COLUMN IF NOT EXISTS command_name text`);
    await q.query(`ALTER TABLE zmodu_outbox ADD COLUMN IF NOT EXISTS command_hash text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_outbox DROP COLUMN IF EXISTS command_hash`);
    await q.query(`ALTER TABLE zmodu_outbox DROP COLUMN IF EXISTS command_name`);
  }
}

/** The outbox's table, in order. `zmoduMigrations()` includes them once @zmodu/outbox is loaded. */
export const ZMODU_OUTBOX_MIGRATIONS = registerMigrations('@zmodu/outbox', [
  ZmoduOutbox1764461300000,
  ZmoduOutboxCommandStamp1764470000000,
]);
