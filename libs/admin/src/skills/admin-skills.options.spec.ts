import { createCache } from 'cache-manager';
import { InMemoryAdminConfigStore } from '../config/in-memory-admin-config.store';
import { DEFAULT_ADMIN_SKILL_PERMISSIONS, resolveAdminSkillsOptions } from './admin-skills.options';
import { InvalidAdminSkillsOptionsException } from './exceptions/invalid-admin-skills-options.exception';

const fails = (raw: unknown, field: string, problem: RegExp) => {
  let error: unknown;
  try {
    resolveAdminSkillsOptions(raw as never);
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(InvalidAdminSkillsOptionsException);
  expect((error as InvalidAdminSkillsOptionsException).field).toBe(field);
  expect((error as Error).message).toMatch(problem);
};

describe('resolveAdminSkillsOptions', () => {
  it('has a default for every option: no cache, no key, the TypeORM store, the audit export, the admin:* codes', () => {
    const o = resolveAdminSkillsOptions(undefined);
    expect(o.caches.size).toBe(0);
    expect(o.configKeys.size).toBe(0);
    expect(o.store).toBe('typeorm');
    expect(o.audit).toEqual({});
    expect(o.onUserManage).toBeUndefined();
    expect(o.permissions).toEqual(DEFAULT_ADMIN_SKILL_PERMISSIONS);
    expect(o.permissions).toEqual({
      cache: 'admin:cache',
      config: 'admin:config',
      audit: 'admin:audit',
      user: 'admin:user',
      tenant: 'admin:tenant',
    });
  });

  it('lets the app override permission codes by its own keys; a key left out keeps its default', () => {
    const o = resolveAdminSkillsOptions({ permissions: { config: 'ops:config', user: undefined } });
    expect(o.permissions).toEqual({ ...DEFAULT_ADMIN_SKILL_PERMISSIONS, config: 'ops:config' });
    fails({ permissions: { configs: 'x' } }, 'permissions.configs', /the keys are cache, config, audit, user, tenant/);
    fails({ permissions: { cache: '' } }, 'permissions.cache', /permission code/);
    fails({ permissions: JSON.parse('{"__proto__": "x"}') }, 'permissions.__proto__', /the keys are/);
    fails({ permissions: Object.create({ cache: 'inherited' }) }, 'permissions.cache', /.+/);
  });

  it('takes a cache-manager Cache or a spec, with a tenant key scheme by default', () => {
    const cache = createCache();
    const o = resolveAdminSkillsOptions({
      caches: { sessions: cache, ref: { cache, scope: 'global' }, q: { cache, tenantKey: (t, k) => `${k}@${t}` } },
    });
    expect(o.caches.get('sessions')).toMatchObject({ name: 'sessions', scope: 'tenant' });
    expect(o.caches.get('sessions')?.tenantKey('acme', 'k')).toBe('acme:k');
    expect(o.caches.get('ref')?.tenantKey('acme', 'k')).toBe('k');
    expect(o.caches.get('q')?.tenantKey('acme', 'k')).toBe('k@acme');
    expect(o.caches.get('constructor')).toBeUndefined();
    fails({ caches: { sessions: {} } }, 'caches["sessions"]', /cache-manager Cache/);
    fails({ caches: { sessions: { del: () => 1 } } }, 'caches["sessions"]', /cache-manager Cache/);
    fails({ caches: { sessions: { cache, scope: 'shared' } } }, 'caches["sessions"].scope', /'tenant' or 'global'/);
    fails({ caches: { sessions: { cache, tenantKey: 'x' } } }, 'caches["sessions"].tenantKey', /function/);
    fails({ caches: { ref: { cache, scope: 'global', clearTenant: () => 1 } } }, 'caches["ref"]', /do not apply/);
    fails({ caches: { 'bad name': cache } }, 'caches["bad name"]', /name/);
    fails({ caches: [cache] }, 'caches', /object of caches/);
  });

  it('checks each declared config key: its name, its type, its default, its flags', () => {
    const o = resolveAdminSkillsOptions({
      config: {
        keys: { 'a.b': { type: 'integer', mutable: true, default: 3 }, c: { type: { type: 'array', items: { type: 'string' } } } },
      },
    });
    expect(o.configKeys.get('a.b')).toMatchObject({ mutable: true, default: 3, type: 'integer' });
    expect(o.configKeys.get('c')).toMatchObject({ mutable: false, default: null });
    expect(o.configKeys.get('a.b')?.check(2.5)).toEqual([expect.stringMatching(/integer/)]);
    expect(o.configKeys.get('a.b')?.check(Number.NaN)).not.toEqual([]);
    expect(o.configKeys.get('c')?.check(['x'])).toEqual([]);
    fails({ config: { keys: { 'a b': { type: 'string' } } } }, 'config.keys["a b"]', /name/);
    fails({ config: { keys: { a: { type: 'text' } } } }, 'config.keys["a"].type', /number, integer, string, boolean/);
    fails({ config: { keys: { a: {} } } }, 'config.keys["a"].type', /required/);
    fails({ config: { keys: { a: { type: 'integer', default: 'x' } } } }, 'config.keys["a"].default', /does not fit/);
    fails({ config: { keys: { a: { type: 'integer', mutable: 'yes' } } } }, 'config.keys["a"].mutable', /boolean/);
    fails({ config: { keys: { a: { type: { type: 'nonsense' } } } } }, 'config.keys["a"].type', /JSON Schema/);
    fails({ config: { keys: ['a'] } }, 'config.keys', /object/);
    fails({ config: 'a' }, 'config', /keys/);
  });

  it('refuses a config key whose schema has a keyword or a format the validator would ignore, with its path (attack: a value outside the declared format was written)', () => {
    const schema = (over: Record<string, unknown>) => ({
      config: { keys: { 'ui.colour': { type: { type: 'object', properties: { c: over } } } } },
    });
    fails(
      schema({ type: 'string', format: 'colour' }),
      'config.keys["ui.colour"].type',
      /the schema has format "colour" at #\/properties\/c, which the validator cannot check/,
    );
    fails(
      schema({ type: 'string', enumm: ['red'] }),
      'config.keys["ui.colour"].type',
      /the schema has the keyword "enumm" at #\/properties\/c, which the validator does not know/,
    );
    const key = resolveAdminSkillsOptions({
      config: { keys: { 'ops.contact': { type: { type: 'string', format: 'email' }, mutable: true } } },
    }).configKeys.get('ops.contact');
    expect(key?.check('ops@example.com')).toEqual([]);
    expect(key?.check('=cmd|calc')).toEqual(['value must match format "email"']);
  });

  it('checks the store, the callbacks and the audit option', () => {
    const store = new InMemoryAdminConfigStore();
    expect(resolveAdminSkillsOptions({ store }).store).toBe(store);
    expect(resolveAdminSkillsOptions({ audit: false }).audit).toBe(false);
    expect(resolveAdminSkillsOptions({ audit: { allTenantsPermission: 'platform:audit' } }).audit).toEqual({
      allTenantsPermission: 'platform:audit',
    });
    fails(
      { store: 'postgres' },
      'store',
      /expected 'typeorm', 'memory' or a store of your own \(an object with get, list, set\), got "postgres"/,
    );
    fails({ store: { get: () => 1 } }, 'store', /an object with get, list, set/);
    expect(resolveAdminSkillsOptions({ store: 'memory' }).store).toBe('memory');
    fails({ onUserManage: 'http://x' }, 'onUserManage', /function/);
    fails({ onTenantProvision: {} }, 'onTenantProvision', /function/);
    fails({ audit: { allTenantsPermission: ' ' } }, 'audit.allTenantsPermission', /permission code/);
    fails({ audit: { everyone: true } }, 'audit.everyone', /not an option/);
    fails({ audit: 'yes' }, 'audit', /boolean/);
    fails('x', 'options', /object/);
  });
});
