/**
 * A cache the admin skills may invalidate: anything with the cache-manager (v6/v7) `Cache` shape, e.g. what
 * `@nestjs/cache-manager` injects as CACHE_MANAGER or what `createCache()` of `cache-manager` returns.
 */
export interface AdminCache {
  del(key: string): Promise<unknown>;
  /** Used when present, to delete several keys in one call. */
  mdel?(keys: string[]): Promise<unknown>;
  clear(): Promise<unknown>;
}

/** An allow-listed cache with how its keys belong to tenants. */
export interface AdminCacheSpec {
  readonly cache: AdminCache;
  /**
   * 'tenant' (default): the cache holds entries of several tenants, each under a key of its tenant (`tenantKey`), so a
   * tenant admin invalidates only its own keys, and a full clear is refused unless `clearTenant` says how to clear one
   * tenant. 'global': the cache holds no tenant data (e.g. reference data): keys are used as given and a full clear
   * clears it for every tenant.
   */
  readonly scope?: 'tenant' | 'global';
  /** The stored key of a tenant's key (scope 'tenant'). Default `${tenantId}:${key}`. */
  readonly tenantKey?: (tenantId: string, key: string) => string;
  /** How to drop every entry of one tenant (scope 'tenant'), for `admin.cache.clear`; without it a clear is refused. */
  readonly clearTenant?: (tenantId: string, cache: AdminCache) => Promise<unknown> | unknown;
}

/** The default key scheme of a tenant-scoped cache: the tenant id, a colon, the key. */
export const defaultTenantKey = (tenantId: string, key: string): string => `${tenantId}:${key}`;

/** An allow-listed cache after the defaults are merged. */
export interface ResolvedAdminCache {
  readonly name: string;
  readonly cache: AdminCache;
  readonly scope: 'tenant' | 'global';
  readonly tenantKey: (tenantId: string, key: string) => string;
  readonly clearTenant?: (tenantId: string, cache: AdminCache) => Promise<unknown> | unknown;
}

export const isAdminCache = (value: unknown): value is AdminCache =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as AdminCache).del === 'function' &&
  typeof (value as AdminCache).clear === 'function';
