import type { PGlite } from '@electric-sql/pglite';
import type { DataSourceOptions } from 'typeorm';
import { createPgliteDriver } from './pglite-driver';

type Extra = Partial<Omit<DataSourceOptions, 'type'>>;

/** TypeORM options over an open PGlite instance (all access serialized through one session). */
export function embeddedDataSourceOptions(db: PGlite, extra: Extra = {}): DataSourceOptions {
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
