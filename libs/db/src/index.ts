export * from './pglite-driver';
export * from './embedded-database';
export * from './database-options';
