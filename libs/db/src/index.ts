export * from './pglite-driver';
export * from './embedded-database';
export * from './database-options';
export { runReadOnlyStatement } from './read-only';
export { queryRows, returning } from './rows';
