import { checkStoreChoice, ownOptions } from '@zmodu/core';
import type { StoreChoice } from '@zmodu/core';
import { InMemoryAdminConfigStore } from '../config/in-memory-admin-config.store';
import { permissionCodeProblem, resolveSkillPermissions } from '@zmodu/skills/internal';
import { SkillPermissions } from '@zmodu/skills';
import type { AdminConfigStore } from '../config/admin-config.store';
import type { AdminConfigOptions } from '../config/admin-config.types';
import { DeclaredConfigKey, resolveConfigKeys } from '../config/config-keys';
import { AdminCache, AdminCacheSpec, defaultTenantKey, isAdminCache, ResolvedAdminCache } from './admin-cache';
import { InvalidAdminSkillsOptionsException } from './exceptions/invalid-admin-skills-options.exception';

/** The keys of `AdminSkillsModuleOptions.permissions`, one per family of admin skills. */
export const ADMIN_SKILL_PERMISSION_KEYS = ['cache', 'config', 'audit', 'user', 'tenant'] as const;
export type AdminSkillPermissionKey = (typeof ADMIN_SKILL_PERMISSION_KEYS)[number];
/** The permission code each family of admin skills requires, e.g. `{ config: 'ops:config' }`; a key left out keeps its default. */
export type AdminSkillPermissions = SkillPermissions<AdminSkillPermissionKey>;

/** The default permission codes: admin:cache, admin:config, admin:audit, admin:user, admin:tenant. */
export const DEFAULT_ADMIN_SKILL_PERMISSIONS: Readonly<Record<AdminSkillPermissionKey, string>> = Object.freeze({
  cache: 'admin:cache',
  config: 'admin:config',
  audit: 'admin:audit',
  user: 'admin:user',
  tenant: 'admin:tenant',
});

/** What `onUserManage` and `onTenantProvision` receive: the caller, from the call's context, and the validated arguments. */
export interface AdminDelegatedRequest {
  /** The skill called: 'admin.user.manage' or 'admin.tenant.provision'. */
  readonly skill: string;
  /** The caller's tenant, from the SkillContext (never from the model's arguments). */
  readonly tenantId: string;
  readonly userId: string | null;
  readonly agent: string | null;
  readonly runId: string;
  readonly permissions: readonly string[];
  /** What to do, e.g. 'invite', 'disable' (the callback decides which it accepts). */
  readonly operation: string;
  /** Whom or what it is about (a user id, a new tenant's name), or null. */
  readonly target: string | null;
  /** Further arguments, as validated JSON. */
  readonly details: Readonly<Record<string, unknown>>;
  /** Aborts at the call's deadline. */
  readonly signal: AbortSignal;
}

/** An application callback behind admin.user.manage or admin.tenant.provision. Its JSON result is the skill's result. */
export type AdminDelegatedCallback = (request: AdminDelegatedRequest) => unknown;

/** Options of `admin.audit.export`. */
export interface AdminAuditExportOptions {
  /**
   * A permission that lets its holder (a platform admin) export another tenant's audit by naming it. Default none:
   * every caller exports only its own tenant.
   */
  readonly allTenantsPermission?: string;
}

/** Options of `AdminSkillsModule.forRoot` / `forRootAsync`. Every field has a default. */
export class AdminSkillsModuleOptions {
  /** The caches admin.cache.invalidate / admin.cache.clear may touch, by name: a cache-manager Cache, or an AdminCacheSpec. Default none. */
  caches?: Readonly<Record<string, AdminCache | AdminCacheSpec>> = {};
  /** The config keys admin.config.get / admin.config.set know, with their type and whether they may change. Default none. */
  config?: AdminConfigOptions = { keys: {} };
  /**
   * 'typeorm' (default): a TypeOrmAdminConfigStore on the app's DataSource (created by `zmoduMigrations()`); 'memory': an
   * InMemoryAdminConfigStore (lost at restart); or your AdminConfigStore (it must pass adminConfigStoreContract).
   */
  store?: StoreChoice<AdminConfigStore> = 'typeorm';
  /** Register admin.audit.export (needs GuardModule's audit store). Default true. */
  audit?: boolean | AdminAuditExportOptions = true;
  /** The application's user management behind admin.user.manage. Without it, the skill refuses every call. */
  onUserManage?: AdminDelegatedCallback;
  /** The application's tenant provisioning behind admin.tenant.provision. Without it, the skill refuses every call. */
  onTenantProvision?: AdminDelegatedCallback;
  /** Override permission codes, e.g. `{ config: 'ops:config' }`. Default DEFAULT_ADMIN_SKILL_PERMISSIONS. */
  permissions?: AdminSkillPermissions = {};
}

/** What AdminSkillsModule tells the store resolver of @zmodu/core about its config `store`. */
export const ADMIN_CONFIG_STORE_CHOICE = {
  option: 'AdminSkillsModule.forRoot({ store })',
  keeps: "the tenants' config values",
  methods: ['get', 'list', 'set'],
  memory: () => new InMemoryAdminConfigStore(),
  invalid: (problem: string) => new InvalidAdminSkillsOptionsException('store', problem),
} as const;

/** The options after the defaults are merged and checked. */
export interface ResolvedAdminSkillsOptions {
  readonly caches: ReadonlyMap<string, ResolvedAdminCache>;
  readonly configKeys: ReadonlyMap<string, DeclaredConfigKey>;
  readonly store: StoreChoice<AdminConfigStore>;
  readonly audit: false | { readonly allTenantsPermission?: string };
  readonly onUserManage?: AdminDelegatedCallback;
  readonly onTenantProvision?: AdminDelegatedCallback;
  readonly permissions: Readonly<Record<AdminSkillPermissionKey, string>>;
}

const fail = (field: string, problem: string): never => {
  throw new InvalidAdminSkillsOptionsException(field, problem);
};
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const CACHE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Merge the given options over the defaults, once; throws InvalidAdminSkillsOptionsException naming the field. */
export function resolveAdminSkillsOptions(raw: Partial<AdminSkillsModuleOptions> | undefined): ResolvedAdminSkillsOptions {
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) fail('options', 'must be an object');
  const o = Object.assign(new AdminSkillsModuleOptions(), ownOptions(raw ?? {}));
  const store = o.store as unknown;
  checkStoreChoice({ ...ADMIN_CONFIG_STORE_CHOICE, choice: store });
  for (const key of ['onUserManage', 'onTenantProvision'] as const)
    if (o[key] !== undefined && typeof o[key] !== 'function') fail(key, 'must be a function (request) => result');
  const permissions = resolveSkillPermissions(o.permissions, ADMIN_SKILL_PERMISSION_KEYS, 'permissions', fail);
  return Object.freeze({
    caches: resolveCaches(o.caches),
    configKeys: resolveConfigKeys(o.config, fail),
    store: store as StoreChoice<AdminConfigStore>,
    audit: resolveAudit(o.audit),
    onUserManage: o.onUserManage,
    onTenantProvision: o.onTenantProvision,
    permissions: Object.freeze({ ...DEFAULT_ADMIN_SKILL_PERMISSIONS, ...permissions }),
  });
}

function resolveCaches(raw: unknown): ReadonlyMap<string, ResolvedAdminCache> {
  if (!isPlainObject(raw)) fail('caches', 'must be an object of caches by name, e.g. { sessions: cache }');
  const caches = new Map<string, ResolvedAdminCache>();
  // Own entries only: a cache named like a prototype member ('constructor') is never read from the prototype.
  for (const [name, given] of Object.entries(raw as object) as Array<[string, unknown]>) {
    const field = `caches[${JSON.stringify(name)}]`;
    if (!CACHE_NAME.test(name)) fail(field, `has a name that is not ${CACHE_NAME}`);
    const spec: Partial<AdminCacheSpec> = isAdminCache(given) ? { cache: given } : isPlainObject(given) ? ownOptions(given) : {};
    if (!isAdminCache(spec.cache)) fail(field, 'must be a cache-manager Cache (del, clear) or { cache, scope?, tenantKey?, clearTenant? }');
    const scope = spec.scope ?? 'tenant';
    if (scope !== 'tenant' && scope !== 'global') fail(`${field}.scope`, "must be 'tenant' or 'global'");
    for (const fn of ['tenantKey', 'clearTenant'] as const)
      if (spec[fn] !== undefined && typeof spec[fn] !== 'function') fail(`${field}.${fn}`, 'must be a function');
    if (scope === 'global' && (spec.tenantKey || spec.clearTenant))
      fail(field, "is scope 'global': tenantKey and clearTenant do not apply");
    caches.set(name, {
      name,
      cache: spec.cache as AdminCache,
      scope,
      tenantKey: scope === 'global' ? (_tenant, key) => key : (spec.tenantKey ?? defaultTenantKey),
      clearTenant: spec.clearTenant,
    });
  }
  return caches;
}

function resolveAudit(raw: unknown): ResolvedAdminSkillsOptions['audit'] {
  if (raw === false) return false;
  if (raw === true) return {};
  if (!isPlainObject(raw)) return fail('audit', 'must be a boolean or { allTenantsPermission? }');
  const given = ownOptions(raw as AdminAuditExportOptions);
  for (const key of Object.keys(raw))
    if (key !== 'allTenantsPermission') fail(`audit.${key}`, 'is not an option (allTenantsPermission is)');
  if (given.allTenantsPermission !== undefined) {
    const problem = permissionCodeProblem(given.allTenantsPermission);
    if (problem) fail('audit.allTenantsPermission', problem);
  }
  return Object.freeze({ allTenantsPermission: given.allTenantsPermission });
}
