import type { ConfigEntry, ConfigWrite, ConfigWriteResult } from './admin-config.types';

/**
 * Where tenants' config values live (a port: TypeOrmAdminConfigStore on PostgreSQL is the default,
 * InMemoryAdminConfigStore for tests). Every method is scoped to one tenant; no method reads or writes
 * another tenant's values. Keys are not checked here (AdminConfig checks them against the declared ones).
 * A store must pass `adminConfigStoreContract`.
 */
export interface AdminConfigStore {
  /** The tenant's stored entry of `key`, or undefined. */
  get(tenantId: string, key: string): Promise<ConfigEntry | undefined>;
  /** The tenant's stored entries of the given keys (those it has), in no particular order. */
  list(tenantId: string, keys: readonly string[]): Promise<ConfigEntry[]>;
  /**
   * Write `value` (JSON) in one transaction: the version goes up by one, and the entry before is returned.
   * With `expectedVersion`, the write lands only on that version (0: no stored value yet), decided in the
   * store (a conditional write), never by a read in application code; else ConfigVersionConflictException.
   */
  set(tenantId: string, key: string, value: unknown, write?: ConfigWrite): Promise<ConfigWriteResult>;
}
