// The public API of @zmodu/db: the embedded PGlite database and DataSource options for it or a server;
// throwaway databases for tests are in @zmodu/db/testing.
export { openEmbeddedDatabase, EmbeddedDatabase, EmbeddedDatabaseError } from './embedded-database';
export type { EmbeddedDatabaseOptions, EmbeddedResult, ReadOnlyRequest, ReadOnlyResult } from './embedded-database';
export { EmbeddedDatabaseLockedException } from './exceptions/embedded-database-locked.exception';
export { EmbeddedDatabaseVersionException } from './exceptions/embedded-database-version.exception';
export type { EmbeddedFolderHolder } from './exceptions/embedded-database-locked.exception';
export { embeddedDataSourceOptions, isEmbeddedDataSource, listeningPgClient, serverDataSourceOptions } from './database-options';
export { PgPackageUnavailableException } from './exceptions/pg-package-unavailable.exception';
export { isEmbeddedConnection } from './pglite-driver';
export type { EmbeddedConnection, PgCompatibleDriver, PgliteDriverOptions } from './pglite-driver';
export { runReadOnlyStatement } from './read-only';
export { SlotsTakenError, TAKE_SLOT_SQL } from './statement-bounds';
export type { StatementSlot } from './statement-bounds';
export { queryRows, returning } from './rows';
export { isDatabaseUnavailable } from './database-unavailable';
