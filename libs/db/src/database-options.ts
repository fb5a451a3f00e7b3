import type { DataSourceOptions } from 'typeorm';
import type { EmbeddedDatabase } from './embedded-database';
import { loadPg } from './pg-package';
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

/** Whether TypeORM options are those of an embedded database (one session, one statement at a time). */
export function isEmbeddedDataSource(options: DataSourceOptions): boolean {
  return (options as { driver?: { embedded?: unknown } }).driver?.embedded === true;
}

/**
 * A `pg` client that always listens for `'error'`. A server that ends a connection (a restart: 57P01) sends an error to
 * every client; a client checked out but idle, or one whose query runner released it after a first error, then emits it
 * with no listener, and Node throws (ERR_UNHANDLED_ERROR) into whatever runs: a request answered 500, or a process that
 * dies. With this listener the broken client's next use fails as a lost connection (a 503), and the pool replaces it.
 * The class is made at the first call (`pg` is an optional peer: without it, PgPackageUnavailableException).
 */
let listening: (new (config?: object) => object) | undefined;
export function listeningPgClient(): new (config?: object) => object {
  if (listening) return listening;
  const { Client } = loadPg('A PostgreSQL server connection (serverDataSourceOptions)');
  listening = class ListeningPgClient extends Client {
    constructor(config?: object) {
      super(config);
      this.on('error', () => undefined);
    }
  };
  return listening;
}

/**
 * TypeORM options for a PostgreSQL server (its pool's clients always listen for 'error', see listeningPgClient(),
 * unless `extra.Client` says otherwise). Needs the `pg` package: without it, PgPackageUnavailableException here.
 */
export function serverDataSourceOptions(url: string, extra: Extra = {}): DataSourceOptions {
  const given = extra as { extra?: Record<string, unknown> };
  return {
    ...(extra as object),
    type: 'postgres',
    url,
    uuidExtension: 'pgcrypto',
    extra: { Client: given.extra?.Client ?? listeningPgClient(), ...(given.extra ?? {}) },
  } as DataSourceOptions;
}
