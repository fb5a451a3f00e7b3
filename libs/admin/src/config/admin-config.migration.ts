import { MigrationInterface, QueryRunner } from 'typeorm';
import { registerMigrations } from '@zmodu/core';

/** The tenants' config values: one row per (tenant, key), a JSON value and its version. */
export class ZmoduAdminConfig1764590000000 implements MigrationInterface {
  name = 'ZmoduAdminConfig1764590000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_admin_config (
      tenant_id text NOT NULL,
      key text NOT NULL,
      value jsonb NOT NULL,
      version integer NOT NULL CHECK (version >= 1),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_by text,
      PRIMARY KEY (tenant_id, key)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_admin_config`);
  }
}

/** AdminSkillsModule's config table. `zmoduMigrations()` includes it once @zmodu/admin is loaded. */
export const ZMODU_ADMIN_MIGRATIONS = registerMigrations('@zmodu/admin', [ZmoduAdminConfig1764590000000]);
