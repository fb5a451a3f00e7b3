import { registerMigrations } from '@zmodu/core';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent memory: entries keyed by tenant and user (two columns), a generated full-text column with
 * a GIN index, and the erase epoch of each (tenant, user), which refuses writes started before an erase.
 */
export class ZmoduMemory1764560000000 implements MigrationInterface {
  name = 'ZmoduMemory1764560000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_memory (
      id uuid PRIMARY KEY,
      tenant_id text NOT NULL,
      user_id text NOT NULL,
      agent text NOT NULL,
      kind text NOT NULL,
      content text NOT NULL,
      search tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      expires_at timestamptz
    )`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_memory_scope_idx ON zmodu_memory (tenant_id, user_id, created_at DESC)`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_memory_search_idx ON zmodu_memory USING GIN (search)`);
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_memory_erasures (
      tenant_id text NOT NULL,
      user_id text NOT NULL,
      epoch bigint NOT NULL DEFAULT 0,
      erased_at timestamptz,
      PRIMARY KEY (tenant_id, user_id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_memory_erasures`);
    await q.query(`DROP TABLE IF EXISTS zmodu_memory`);
  }
}

/** MemoryModule's tables, in order. `zmoduMigrations()` includes them once @zmodu/memory is loaded. */
export const ZMODU_MEMORY_MIGRATIONS = registerMigrations('@zmodu/memory', [ZmoduMemory1764560000000]);
