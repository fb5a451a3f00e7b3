import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadPg } from '../pg-package';
import { DataSource, DataSourceOptions } from 'typeorm';
import { embeddedDataSourceOptions, serverDataSourceOptions } from '../database-options';
import { EmbeddedDatabase, openEmbeddedDatabase } from '../embedded-database';

type Extra = Partial<Omit<DataSourceOptions, 'type'>>;

/** The environment variable naming a PostgreSQL server for test databases (any database on it; the user may CREATE DATABASE). */
export const TEST_DATABASE_URL_ENV = 'ZMODU_TEST_DATABASE_URL';

export interface TestDatabaseOptions {
  /**
   * A PostgreSQL server to create the database on (`postgres://user:pass@host:port/postgres`; the
   * user needs CREATEDB). Default: `process.env.ZMODU_TEST_DATABASE_URL`; unset, an embedded PGlite
   * in a temp folder.
   */
  readonly url?: string;
}

/**
 * A database of its own for one test suite: PGlite in a temp folder by default, or a fresh
 * database on the PostgreSQL server named by `url` / ZMODU_TEST_DATABASE_URL (run your suite both ways).
 * `options()` may be called again after the previous DataSource was destroyed: it opens the
 * same database anew, as a restarted process would. `drop()` removes it.
 */
export interface TestDatabase {
  readonly kind: 'pglite' | 'postgres';
  /** A name of its own (the server database's name), for cluster-wide objects such as roles. */
  readonly name: string;
  /** A db.query reader role of its own: roles are shared by every database of a server. Dropped by `drop()`. */
  readonly fenceRole: string;
  /** Where another process finds it: a server URL, or the PGlite data folder (open by one process at a time). */
  readonly location: { readonly url?: string; readonly dataDir?: string };
  /** TypeORM DataSource options for it (add your entities, migrations, ... in `extra`). */
  options(extra?: Extra): Promise<DataSourceOptions>;
  drop(): Promise<void>;
}

/** True when test databases are made on a PostgreSQL server (ZMODU_TEST_DATABASE_URL is set). */
export const usingPostgres = (): boolean => !!process.env[TEST_DATABASE_URL_ENV];

/** A throwaway database: embedded (PGlite in a temp folder) or on the PostgreSQL server of `options.url` / ZMODU_TEST_DATABASE_URL. */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = options.url ?? process.env[TEST_DATABASE_URL_ENV];
  if (adminUrl) return createServerDatabase(adminUrl);
  return createPgliteDatabase();
}

/** A throwaway database with a DataSource open on it; `close()` destroys both. */
export async function openTestDataSource(
  extra: Extra = {},
  options: TestDatabaseOptions = {},
): Promise<{ db: TestDatabase; ds: DataSource; close(): Promise<void> }> {
  const db = await createTestDatabase(options);
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

/**
 * A prepared PGlite data folder (initdb is the slow part of a cold start), made once per installed
 * PGlite version and kept in the temp folder; every embedded test database starts from it.
 * Safe to call from parallel workers (written to a temp name, then renamed).
 */
export async function embeddedTemplate(): Promise<Blob> {
  const path = templatePath();
  if (!existsSync(path)) {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create();
    const dump = await db.dumpDataDir('gzip');
    await db.close();
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
    renameSync(tmp, path);
  }
  return new Blob([readFileSync(path)]);
}

/**
 * The same prepared data folder as a folder, made once per installed PGlite version in the temp folder: every embedded
 * test database starts as a copy of it (a copy and an open take a fraction of a second; loading the tarball into PGlite
 * takes seconds of CPU, paid by every test database). Made under a temp name and renamed, so parallel workers agree.
 */
async function embeddedTemplateFolder(): Promise<string> {
  const path = templatePath().replace(/\.tar\.gz$/, '');
  if (!existsSync(join(path, 'PG_VERSION'))) {
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create({ dataDir: tmp });
    await db.close();
    try {
      renameSync(tmp, path);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another worker made it first
    }
  }
  return path;
}

/** Keyed by the installed PGlite version (its package.json, found above its entry point: the package does not export it). */
function templatePath(): string {
  let dir = dirname(require.resolve('@electric-sql/pglite'));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return join(tmpdir(), `zmodu-pglite-template-${version}.tar.gz`);
}

async function createPgliteDatabase(): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'zmodu-test-'));
  let first = true;
  /**
   * The instance the last options() opened. The folder is opened by one instance at a time (its lock): options() again
   * stands for a restarted process, so it closes the one before if nothing did (an app whose boot failed leaves its
   * DataSource open: Nest closes nothing it did not finish starting).
   */
  let current: EmbeddedDatabase | undefined;
  return {
    kind: 'pglite',
    name: 'pglite',
    fenceRole: 'zmodu_reader',
    location: { dataDir: dir },
    async options(extra = {}) {
      if (current && !current.closed) await current.close();
      if (first) cpSync(await embeddedTemplateFolder(), dir, { recursive: true });
      first = false;
      current = await openEmbeddedDatabase({ dataDir: dir });
      return embeddedDataSourceOptions(current, extra);
    },
    async drop() {
      if (current && !current.closed) await current.close();
      rmSync(dir, { recursive: true, force: true });
      // The folder's lock file beside it, which a process killed while it had the folder open leaves behind.
      rmSync(`${dir}.lock`, { force: true });
    },
  };
}

async function createServerDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `zt_${randomBytes(6).toString('hex')}`;
  const admin = new (loadPg('A test database on a PostgreSQL server').Client)({ connectionString: adminUrl });
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
      const c = new (loadPg('A test database on a PostgreSQL server').Client)({ connectionString: adminUrl });
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
