import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { embeddedDataSourceOptions, openEmbeddedDatabase, serverDataSourceOptions } from '@zmodu/db';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { templatePath } = require('./pglite-template-path');

type Extra = Partial<Omit<DataSourceOptions, 'type'>>;

/**
 * A database of its own for one test suite: PGlite in a temp folder by default, or a fresh
 * database on the PostgreSQL server named by ZMODU_TEST_DATABASE_URL (CI runs both).
 * `options()` may be called again after the previous DataSource was destroyed: it opens the
 * same database anew, as a restarted process would.
 */
export interface TestDatabase {
  readonly kind: 'pglite' | 'postgres';
  /** A name of its own (the server database's name), for cluster-wide objects such as roles. */
  readonly name: string;
  /** A db.query reader role of its own: roles are shared by every database of a server. Dropped by `drop()`. */
  readonly fenceRole: string;
  /** Where another process finds it: a server URL, or the PGlite data folder (open by one process at a time). */
  readonly location: { readonly url?: string; readonly dataDir?: string };
  options(extra?: Extra): Promise<DataSourceOptions>;
  drop(): Promise<void>;
}

export const usingPostgres = (): boolean => !!process.env.ZMODU_TEST_DATABASE_URL;

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.ZMODU_TEST_DATABASE_URL;
  if (adminUrl) return createServerDatabase(adminUrl);
  return createPgliteDatabase();
}

/** The prepared PGlite data folder (initdb done once by the global setup), to start an embedded database from. */
export function embeddedTemplate(): Blob | undefined {
  const template = templatePath();
  return existsSync(template) ? new Blob([readFileSync(template)]) : undefined;
}

async function createPgliteDatabase(): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'zmodu-test-'));
  let first = true;
  return {
    kind: 'pglite',
    name: 'pglite',
    fenceRole: 'zmodu_reader',
    location: { dataDir: dir },
    async options(extra = {}) {
      const loadDataDir = first ? embeddedTemplate() : undefined;
      first = false;
      const db = await openEmbeddedDatabase({ dataDir: dir, loadDataDir });
      return embeddedDataSourceOptions(db, extra);
    },
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function createServerDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `zt_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    name,
    fenceRole: `${name}_reader`,
    location: { url: url.toString() },
    async options(extra = {}) {
      return serverDataSourceOptions(url.toString(), extra);
    },
    async drop() {
      const c = new Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.query(`DROP ROLE IF EXISTS ${name}_reader`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A throwaway database with a DataSource open on it; `close()` destroys both. */
export async function openTestDataSource(extra: Extra = {}): Promise<{ db: TestDatabase; ds: DataSource; close(): Promise<void> }> {
  const db = await createTestDatabase();
  const ds = new DataSource(await db.options(extra));
  await ds.initialize();
  return {
    db,
    ds,
    close: async () => {
      if (ds.isInitialized) await ds.destroy();
      await db.drop();
    },
  };
}
