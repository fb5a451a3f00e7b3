import type { DataSourceOptions } from 'typeorm';
import type { EmbeddedDatabase } from './embedded-database';
import { createPgliteDriver } from './pglite-driver';

type Extra = Partial<Omit<DataSourceOptions, 'type'>>;

/** TypeORM options over an open embedded database (all access serialized through its one session). */
export function embeddedDataSourceOptions(db: EmbeddedDatabase, extra: Extra = {}): DataSourceOptions {
  return {
    ...(extra as object),
    type: 'postgres',
    driver: createPgliteDriver(db),
    installExtensions: false,
    uuidExtension: 'pgcrypto',
  } as DataSourceOptions;
}

/** TypeORM options for a PostgreSQL server. */
export function serverDataSourceOptions(url: string, extra: Extra = {}): DataSourceOptions {
  return { ...(extra as object), type: 'postgres', url, uuidExtension: 'pgcrypto' } as DataSourceOptions;
}
