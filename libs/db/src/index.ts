// The public API of @zmodu/db: the embedded PGlite database and DataSource options for it or a server;
// throwaway databases for tests are in @zmodu/db/testing.
export { openEmbeddedDatabase, EmbeddedDatabase, EmbeddedDatabaseError } from './embedded-database';
export type { EmbeddedDatabaseOptions } from './embedded-database';
export { EmbeddedDatabaseLockedException } from './exceptions/embedded-database-locked.exception';
export { EmbeddedDatabaseVersionException } from './exceptions/embedded-database-version.exception';
export { listeningPgClient } from './database-options';
export { embeddedDataSourceOptions, isEmbeddedDataSource, serverDataSourceOptions } from './database-options';
export { PgPackageUnavailableException } from './exceptions/pg-package-unavailable.exception';
export { ZmoduError } from '@zmodu/core';
