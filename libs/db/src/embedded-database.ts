import { mkdirSync } from 'node:fs';
import { PGlite, types } from '@electric-sql/pglite';

export interface EmbeddedDatabaseOptions {
  /** Folder of the data; omitted: in memory. */
  readonly dataDir?: string;
  /** A `dumpDataDir()` tarball to start from (skips initdb: much faster, for tests). */
  readonly loadDataDir?: Blob | File;
}

/**
 * Open PGlite with the parsers `pg` uses (int8 and numeric as strings), so that code
 * behaves the same on the embedded database and on a PostgreSQL server.
 */
export async function openEmbeddedDatabase(options: EmbeddedDatabaseOptions = {}): Promise<PGlite> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const parsers = {
    [types.INT8]: (value: string) => value,
    [types.NUMERIC]: (value: string) => value,
  };
  return PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    parsers,
  });
}
