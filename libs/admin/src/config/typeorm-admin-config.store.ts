import { DataSource, EntityManager } from 'typeorm';
import { queryRows } from '@zmodu/core';
import type { AdminConfigStore } from './admin-config.store';
import type { ConfigEntry, ConfigWrite, ConfigWriteResult } from './admin-config.types';
import { checkKey, checkTenant, checkWrite, CheckedWrite } from './config-write';
import { ConfigVersionConflictException } from './exceptions/config-version-conflict.exception';

interface Row {
  key: string;
  json: string;
  version: number | string;
  updated_at: Date | string;
  updated_by: string | null;
}

const COLUMNS = 'key, value::text AS json, version, updated_at, updated_by';
const toEntry = (r: Row): ConfigEntry => ({
  key: r.key,
  value: JSON.parse(r.json) as unknown,
  version: Number(r.version),
  updatedAt: new Date(r.updated_at),
  updatedBy: r.updated_by,
});

/** A first value of a key was inserted by another writer between our read and our insert: read again. */
const RACED = Symbol('raced');
const MAX_ATTEMPTS = 3;

/**
 * Config values on PostgreSQL (or PGlite) through TypeORM: the table of ZMODU_ADMIN_MIGRATIONS. Every statement has
 * `tenant_id = $1` in its WHERE. A write runs in one transaction: it locks the row (SELECT ... FOR UPDATE, so
 * concurrent writers of one key queue in the database), checks the expected version, and writes with a conditional
 * UPDATE ... WHERE version = the one locked (or an INSERT ... ON CONFLICT DO NOTHING for a first value), RETURNING.
 */
export class TypeOrmAdminConfigStore implements AdminConfigStore {
  constructor(private readonly dataSource: DataSource) {}

  async get(tenantId: string, key: string): Promise<ConfigEntry | undefined> {
    const rows = await queryRows<Row>(this.dataSource, `SELECT ${COLUMNS} FROM zmodu_admin_config WHERE tenant_id = $1 AND key = $2`, [
      checkTenant(tenantId),
      checkKey(key),
    ]);
    return rows[0] && toEntry(rows[0]);
  }

  async list(tenantId: string, keys: readonly string[]): Promise<ConfigEntry[]> {
    const wanted = [...new Set(keys.map(checkKey))];
    if (wanted.length === 0) return [];
    const rows = await queryRows<Row>(
      this.dataSource,
      `SELECT ${COLUMNS} FROM zmodu_admin_config WHERE tenant_id = $1 AND key = ANY($2::text[]) ORDER BY key`,
      [checkTenant(tenantId), wanted],
    );
    return Array.from(rows, toEntry);
  }

  async set(tenantId: string, key: string, value: unknown, write?: ConfigWrite): Promise<ConfigWriteResult> {
    const w = checkWrite(tenantId, key, value, write);
    for (let attempt = 1; ; attempt++) {
      const result = await this.dataSource.transaction((m) => this.write(m, w));
      if (result !== RACED) return result;
      if (attempt >= MAX_ATTEMPTS) throw new Error(`config key '${w.key}': concurrent first writes kept racing; try again`);
    }
  }

  private async write(m: EntityManager, w: CheckedWrite): Promise<ConfigWriteResult | typeof RACED> {
    const [before] = await queryRows<Row>(m, `SELECT ${COLUMNS} FROM zmodu_admin_config WHERE tenant_id = $1 AND key = $2 FOR UPDATE`, [
      w.tenantId,
      w.key,
    ]);
    const current = before ? Number(before.version) : 0;
    if (w.expectedVersion !== undefined && w.expectedVersion !== current)
      throw new ConfigVersionConflictException(w.key, w.expectedVersion, current);
    const written = before
      ? await queryRows<Row>(
          m,
          `UPDATE zmodu_admin_config SET value = $3::jsonb, version = version + 1, updated_at = clock_timestamp(), updated_by = $4
           WHERE tenant_id = $1 AND key = $2 AND version = $5 RETURNING ${COLUMNS}`,
          [w.tenantId, w.key, w.json, w.updatedBy, current],
        )
      : await queryRows<Row>(
          m,
          `INSERT INTO zmodu_admin_config (tenant_id, key, value, version, updated_at, updated_by)
           VALUES ($1, $2, $3::jsonb, 1, clock_timestamp(), $4) ON CONFLICT (tenant_id, key) DO NOTHING RETURNING ${COLUMNS}`,
          [w.tenantId, w.key, w.json, w.updatedBy],
        );
    if (written.length === 0) return RACED;
    return { previous: before && toEntry(before), entry: toEntry(written[0]) };
  }
}
