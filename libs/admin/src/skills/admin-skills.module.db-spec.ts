import { AgentAuditLog, Guard } from '@zmodu/guard';
import { createSkillContext, SkillCallResult, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AdminSkillsFixture, startAdminSkillsApp } from '../__fixtures__/admin-skills-app';
import { DEFAULT_ADMIN_SKILL_PERMISSIONS } from './admin-skills.options';

const ALL = Object.values(DEFAULT_ADMIN_SKILL_PERMISSIONS);
const ADMIN_SKILLS = [
  ['admin.cache.invalidate', 'execute', 'admin:cache'],
  ['admin.cache.clear', 'execute', 'admin:cache'],
  ['admin.config.get', 'read', 'admin:config'],
  ['admin.config.set', 'execute', 'admin:config'],
  ['admin.user.manage', 'execute', 'admin:user'],
  ['admin.tenant.provision', 'execute', 'admin:tenant'],
  ['admin.audit.export', 'read', 'admin:audit'],
] as const;

interface Call {
  tenant?: string;
  user?: string;
  permissions?: readonly string[];
  allow?: readonly string[];
}

describe('AdminSkillsModule: the admin skills through SkillDispatcher.dispatch', () => {
  let db: TestDatabase;
  let f: AdminSkillsFixture;

  beforeAll(async () => {
    db = await createTestDatabase();
    f = await startAdminSkillsApp(db);
  });

  afterAll(async () => {
    await f?.app.close();
    await db?.drop();
  });

  const dispatch = (name: string, args: unknown, call: Call = {}): Promise<SkillCallResult> =>
    f.app.get(SkillDispatcher).dispatch(
      createSkillContext({
        guard: new Guard({ allow: call.allow ?? [name], allowExecute: true }),
        tenantId: call.tenant ?? 'acme',
        userId: call.user ?? 'alice',
        permissions: call.permissions ?? ALL,
      }),
      name,
      args,
    );

  describe('registration, permissions and the allow list', () => {
    it('registers each admin skill in the one registry, with its action class and permission code', () => {
      const registry = f.app.get(SkillRegistry);
      for (const [name, action, permission] of ADMIN_SKILLS)
        expect(registry.get(name)).toMatchObject({
          name,
          action,
          requiredPermission: permission,
          tenantScoped: true,
          source: 'AdminSkillsModule',
        });
    });

    it('refuses every admin skill without its permission code, before it runs', async () => {
      const args: Record<string, unknown> = {
        'admin.cache.invalidate': { cache: 'sessions', keys: ['x'] },
        'admin.cache.clear': { cache: 'reference', all: true },
        'admin.config.get': { key: 'orders.maxDraft' },
        'admin.config.set': { key: 'orders.maxDraft', value: 9 },
        'admin.user.manage': { operation: 'invite', target: 'bob' },
        'admin.tenant.provision': { operation: 'create', target: 'newco' },
        'admin.audit.export': {},
      };
      for (const [name, , permission] of ADMIN_SKILLS) {
        const others = ALL.filter((p) => p !== permission);
        const refused = await dispatch(name, args[name], { permissions: others });
        expect(refused).toMatchObject({ ok: false, cause: 'missing_permission', error: { error: 'PermissionDenied', permission } });
      }
      expect(f.delegated).toEqual([]);
      expect((await dispatch('admin.config.get', { key: 'orders.maxDraft' })).value).toMatchObject({ value: 5, version: 0 });
    });

    it('reaches an admin skill only when the allow list names it exactly: no pattern, no neighbour', async () => {
      for (const allow of [['admin.*'], ['*'], ['admin.config.*'], ['admin.config.ge?'], ['admin.config'], ['admin.config.set']]) {
        const refused = await dispatch('admin.config.get', { key: 'orders.maxDraft' }, { allow });
        expect(refused).toMatchObject({ ok: false, decision: 'denied', cause: 'denied_not_listed' });
      }
      expect((await dispatch('admin.config.get', { key: 'orders.maxDraft' }, { allow: ['admin.config.get'] })).ok).toBe(true);
    });
  });

  describe('admin.cache.invalidate and admin.cache.clear', () => {
    it("invalidates the named keys of the caller's tenant only, in an allow-listed cache", async () => {
      await f.sessions.set('acme:user:1', 'a1');
      await f.sessions.set('acme:user:2', 'a2');
      await f.sessions.set('globex:user:1', 'g1');
      await f.sessions.set('user:1', 'bare');
      const done = await dispatch('admin.cache.invalidate', { cache: 'sessions', keys: ['user:1'] });
      expect(done).toMatchObject({ ok: true, value: { cache: 'sessions', scope: 'tenant', invalidated: 1, keys: ['user:1'] } });
      expect(await f.sessions.get('acme:user:1')).toBeUndefined();
      expect(await f.sessions.get('acme:user:2')).toBe('a2');
      expect(await f.sessions.get('globex:user:1')).toBe('g1');
      expect(await f.sessions.get('user:1')).toBe('bare');
      // A key spelled as another tenant's stays under the caller's prefix: 'globex:user:1' becomes 'acme:globex:user:1'.
      await dispatch('admin.cache.invalidate', { cache: 'sessions', keys: ['globex:user:1'] });
      expect(await f.sessions.get('globex:user:1')).toBe('g1');
    });

    it("uses a cache's own key scheme, and a global cache's keys as given", async () => {
      await f.quotes.set('t/acme/EURUSD', 1.1);
      await f.quotes.set('t/globex/EURUSD', 1.2);
      await dispatch('admin.cache.invalidate', { cache: 'quotes', keys: ['EURUSD'] });
      expect(await f.quotes.get('t/acme/EURUSD')).toBeUndefined();
      expect(await f.quotes.get('t/globex/EURUSD')).toBe(1.2);
      await f.reference.set('countries', ['FR']);
      await f.reference.set('currencies', ['EUR']);
      await dispatch('admin.cache.invalidate', { cache: 'reference', keys: ['countries'] }, { tenant: 'globex' });
      expect(await f.reference.get('countries')).toBeUndefined();
      expect(await f.reference.get('currencies')).toEqual(['EUR']);
    });

    it('refuses wildcard keys and caches that are not allow-listed, and deletes nothing', async () => {
      await f.sessions.set('acme:user:3', 'a3');
      for (const keys of [['user:*'], ['user:?'], ['user:3', '*'], ['*']]) {
        const refused = await dispatch('admin.cache.invalidate', { cache: 'sessions', keys });
        expect(refused).toMatchObject({ ok: false, error: { reason: 'cache_key_wildcard', message: expect.stringMatching(/wildcard/) } });
      }
      expect(await f.sessions.get('acme:user:3')).toBe('a3');
      for (const cache of ['secrets', 'constructor', '__proto__', 'toString']) {
        const refused = await dispatch('admin.cache.invalidate', { cache, keys: ['user:3'] });
        expect(refused).toMatchObject({
          ok: false,
          error: { reason: 'cache_not_allowed', message: expect.stringMatching(/quotes, reference, sessions|sessions, reference, quotes/) },
        });
        expect((await dispatch('admin.cache.clear', { cache, all: true })).error).toMatchObject({ reason: 'cache_not_allowed' });
      }
      expect((await dispatch('admin.cache.invalidate', { cache: 'sessions', keys: [] })).error).toMatchObject({
        error: 'InvalidArguments',
      });
      expect(await f.sessions.get('acme:user:3')).toBe('a3');
    });

    it('clears only with all: true; a tenant cache only through its clearTenant, with the caller tenant', async () => {
      await f.reference.set('countries', ['FR']);
      for (const args of [{ cache: 'reference' }, { cache: 'reference', all: false }]) {
        const refused = await dispatch('admin.cache.clear', args);
        expect(refused).toMatchObject({ ok: false, error: { reason: 'cache_clear_needs_all' } });
      }
      expect((await dispatch('admin.cache.clear', { cache: 'reference', all: 'yes' })).error).toMatchObject({ error: 'InvalidArguments' });
      expect(await f.reference.get('countries')).toEqual(['FR']);
      expect((await dispatch('admin.cache.clear', { cache: 'reference', all: true })).value).toEqual({
        cache: 'reference',
        scope: 'global',
        cleared: true,
      });
      expect(await f.reference.get('countries')).toBeUndefined();

      await f.sessions.set('globex:user:9', 'g9');
      const shared = await dispatch('admin.cache.clear', { cache: 'sessions', all: true });
      expect(shared).toMatchObject({ ok: false, error: { reason: 'cache_clear_shared', message: expect.stringMatching(/other tenants/) } });
      expect(await f.sessions.get('globex:user:9')).toBe('g9');

      await f.quotes.set('t/acme/all', 1);
      await f.quotes.set('t/globex/all', 2);
      expect((await dispatch('admin.cache.clear', { cache: 'quotes', all: true }, { tenant: 'acme' })).ok).toBe(true);
      expect(f.clearedTenants).toEqual(['acme']);
      expect(await f.quotes.get('t/acme/all')).toBeUndefined();
      expect(await f.quotes.get('t/globex/all')).toBe(2);
    });
  });

  describe('admin.config.get and admin.config.set', () => {
    it('reads a declared key (its default until set) and lists every declared key; an undeclared key is refused', async () => {
      const got = await dispatch('admin.config.get', { key: 'orders.currency' }, { tenant: 'initech' });
      expect(got.value).toEqual({
        key: 'orders.currency',
        value: 'EUR',
        version: 0,
        source: 'default',
        mutable: false,
        type: 'string',
        description: 'The currency of prices',
        updatedAt: null,
        updatedBy: null,
      });
      const listed = await dispatch('admin.config.get', {}, { tenant: 'initech' });
      expect((listed.value as { keys: { key: string }[] }).keys.map((k) => k.key)).toEqual([
        'feature.beta',
        'orders.currency',
        'orders.maxDraft',
        'risk.limit',
        'ui.banner',
      ]);
      for (const key of ['orders.unknown', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const refused = await dispatch('admin.config.get', { key });
        expect(refused).toMatchObject({
          ok: false,
          error: { reason: 'config_key_undeclared', message: expect.stringMatching(/not declared/) },
        });
        expect((await dispatch('admin.config.set', { key, value: 1 })).error).toMatchObject({ reason: 'config_key_undeclared' });
      }
    });

    it('sets a mutable key with its version, and the audit entry of the call records the previous value', async () => {
      const first = await dispatch('admin.config.set', { key: 'orders.maxDraft', value: 8, expectedVersion: 0 }, { tenant: 'audited' });
      expect(first.value).toMatchObject({ key: 'orders.maxDraft', value: 8, version: 1, previous: null, updatedBy: 'alice' });
      const second = await dispatch('admin.config.set', { key: 'orders.maxDraft', value: 12, expectedVersion: 1 }, { tenant: 'audited' });
      expect(second.value).toMatchObject({ value: 12, version: 2, previous: { value: 8, version: 1 } });
      expect((await dispatch('admin.config.get', { key: 'orders.maxDraft' }, { tenant: 'audited' })).value).toMatchObject({
        value: 12,
        version: 2,
        source: 'stored',
        updatedBy: 'alice',
      });
      const audit = await f.app.get(AgentAuditLog).query({ tenantId: 'audited', skill: 'admin.config.set' });
      expect(audit.map((e) => [e.outcome, e.args, e.result])).toEqual([
        ['ok', { key: 'orders.maxDraft', value: 8, expectedVersion: 0 }, expect.objectContaining({ value: 8, version: 1, previous: null })],
        [
          'ok',
          { key: 'orders.maxDraft', value: 12, expectedVersion: 1 },
          expect.objectContaining({ value: 12, version: 2, previous: { value: 8, version: 1 } }),
        ],
      ]);
    });

    it('refuses a read-only key, a value of the wrong type and a stale expectedVersion, and writes nothing', async () => {
      const t = { tenant: 'strict' };
      expect((await dispatch('admin.config.set', { key: 'orders.currency', value: 'USD' }, t)).error).toMatchObject({
        reason: 'config_key_immutable',
        message: expect.stringMatching(/read-only/),
      });
      const wrong: Array<[string, unknown]> = [
        ['orders.maxDraft', '7'],
        ['orders.maxDraft', 7.5],
        ['orders.maxDraft', null],
        ['feature.beta', 'true'],
        ['risk.limit', { amount: 1 }],
        ['ui.banner', { text: 'x'.repeat(81) }],
        ['ui.banner', { text: 'hi', level: 'panic' }],
        ['ui.banner', { level: 'info' }],
        ['ui.banner', { text: 'hi', extra: 1 }],
      ];
      for (const [key, value] of wrong) {
        const refused = await dispatch('admin.config.set', { key, value }, t);
        expect(refused).toMatchObject({ ok: false, error: { reason: 'config_value_invalid', problems: expect.any(Array) } });
        expect((refused.error?.problems as string[]).length).toBeGreaterThan(0);
      }
      expect((await dispatch('admin.config.set', { key: 'risk.limit', value: 2.5 }, t)).value).toMatchObject({ version: 1 });
      const stale = await dispatch('admin.config.set', { key: 'risk.limit', value: 3, expectedVersion: 0 }, t);
      expect(stale).toMatchObject({ ok: false, error: { reason: 'config_version_conflict', expectedVersion: 0, currentVersion: 1 } });
      for (const key of ['orders.currency', 'orders.maxDraft', 'feature.beta', 'ui.banner'])
        expect((await dispatch('admin.config.get', { key }, t)).value).toMatchObject({ version: 0, source: 'default' });
      expect((await dispatch('admin.config.get', { key: 'risk.limit' }, t)).value).toMatchObject({ value: 2.5, version: 1 });
    });

    it('keeps tenants apart: a tenant reads and writes its own values only, also tenants named constructor and __proto__', async () => {
      const tenants = ['alpha', 'beta', 'constructor', '__proto__', 'toString'];
      for (const [i, tenant] of tenants.entries())
        expect((await dispatch('admin.config.set', { key: 'feature.beta', value: i % 2 === 0 }, { tenant })).value).toMatchObject({
          version: 1,
          previous: null,
        });
      for (const [i, tenant] of tenants.entries())
        expect((await dispatch('admin.config.get', { key: 'feature.beta' }, { tenant })).value).toMatchObject({
          value: i % 2 === 0,
          version: 1,
        });
      expect((await dispatch('admin.config.get', { key: 'feature.beta' }, { tenant: 'gamma' })).value).toMatchObject({
        value: false,
        version: 0,
      });
      // The tenant comes from the context: an argument naming another one is not an argument.
      const smuggled = await dispatch('admin.config.set', { key: 'feature.beta', value: true, tenantId: 'beta' }, { tenant: 'alpha' });
      expect(smuggled.error).toMatchObject({ error: 'InvalidArguments' });
      expect((await dispatch('admin.config.get', { key: 'feature.beta', tenant: 'beta' }, { tenant: 'alpha' })).error).toMatchObject({
        error: 'InvalidArguments',
      });
    });

    it('lets exactly one of 8 concurrent sets with the same expectedVersion land; the 7 others are refused as stale', async () => {
      const t = { tenant: 'busy' };
      await dispatch('admin.config.set', { key: 'orders.maxDraft', value: 1 }, t);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          dispatch('admin.config.set', { key: 'orders.maxDraft', value: 100 + i, expectedVersion: 1 }, { ...t, user: `admin${i}` }),
        ),
      );
      const won = results.filter((r) => r.ok);
      expect(won).toHaveLength(1);
      expect(won[0].value).toMatchObject({ version: 2, previous: { value: 1, version: 1 } });
      const lost = results.filter((r) => !r.ok);
      expect(lost).toHaveLength(7);
      for (const r of lost) expect(r.error).toMatchObject({ reason: 'config_version_conflict', expectedVersion: 1, currentVersion: 2 });
      expect((await dispatch('admin.config.get', { key: 'orders.maxDraft' }, t)).value).toMatchObject({
        version: 2,
        value: (won[0].value as { value: number }).value,
      });
    });
  });

  describe('admin.user.manage and admin.tenant.provision', () => {
    it("hands the call to the application's callback with the caller's tenant from the context", async () => {
      const done = await dispatch(
        'admin.user.manage',
        { operation: 'invite', target: 'bob', details: { role: 'viewer' } },
        { tenant: 'acme', user: 'alice' },
      );
      expect(done).toMatchObject({ ok: true, value: { done: 'invite', user: 'bob', tenant: 'acme' } });
      expect(f.delegated).toHaveLength(1);
      expect(f.delegated[0]).toMatchObject({
        skill: 'admin.user.manage',
        tenantId: 'acme',
        userId: 'alice',
        operation: 'invite',
        target: 'bob',
        details: { role: 'viewer' },
      });
      expect(f.delegated[0].signal).toBeInstanceOf(AbortSignal);
      const smuggled = await dispatch('admin.user.manage', { operation: 'invite', target: 'bob', tenantId: 'globex' });
      expect(smuggled.error).toMatchObject({ error: 'InvalidArguments' });
      expect(f.delegated).toHaveLength(1);
    });

    it('refuses with a clear error when the application registered no callback', async () => {
      const refused = await dispatch('admin.tenant.provision', { operation: 'create', target: 'newco' });
      expect(refused).toMatchObject({
        ok: false,
        error: { error: 'NotAvailable', reason: 'callback_missing', message: expect.stringMatching(/no onTenantProvision callback/) },
      });
    });
  });

  describe('admin.audit.export', () => {
    beforeAll(async () => {
      // Calls of two tenants to export: allowed, refused, and a set with its previous value.
      for (const tenant of ['exp-a', 'exp-b']) {
        await dispatch('admin.config.set', { key: 'orders.maxDraft', value: 3 }, { tenant });
        await dispatch('admin.config.set', { key: 'orders.maxDraft', value: 4, expectedVersion: 1 }, { tenant });
        await dispatch('admin.config.get', { key: 'orders.maxDraft' }, { tenant, permissions: [] });
        await dispatch('admin.cache.clear', { cache: 'sessions', all: true }, { tenant, allow: [] });
      }
    });

    type Page = { format: string; rows: number; entries: Array<Record<string, unknown>>; nextCursor: string | null; csv?: string };
    const exportAs = async (args: Record<string, unknown>, call: Call = {}) => dispatch('admin.audit.export', args, call);

    it("exports the caller's tenant only, with each call's kind, arguments and result, oldest first", async () => {
      const res = await exportAs({}, { tenant: 'exp-a' });
      const page = res.value as Page;
      expect(page.format).toBe('json');
      expect(page.entries.map((e) => [e.tenantId, e.skill, e.outcome])).toEqual([
        ['exp-a', 'admin.config.set', 'ok'],
        ['exp-a', 'admin.config.set', 'ok'],
        ['exp-a', 'admin.config.get', 'forbidden'],
        ['exp-a', 'admin.cache.clear', 'denied'],
      ]);
      expect(page.entries[1]).toMatchObject({
        args: { key: 'orders.maxDraft', value: 4, expectedVersion: 1 },
        result: { value: 4, version: 2, previous: { value: 3, version: 1 } },
      });
      expect(page.nextCursor).toBeNull();
    });

    it('filters by kind, skill and time, pages with limit and cursor, and writes CSV', async () => {
      const denied = (await exportAs({ kind: 'denied' }, { tenant: 'exp-a' })).value as Page;
      expect(denied.entries.map((e) => e.skill)).toEqual(['admin.cache.clear']);
      const sets = (await exportAs({ skill: 'admin.config.set', limit: 1 }, { tenant: 'exp-a' })).value as Page;
      expect(sets.entries).toHaveLength(1);
      expect(sets.nextCursor).toEqual(expect.any(String));
      const next = (await exportAs({ skill: 'admin.config.set', limit: 1, cursor: sets.nextCursor }, { tenant: 'exp-a' })).value as Page;
      expect(next.entries).toHaveLength(1);
      expect(next.entries[0].id).not.toBe(sets.entries[0].id);
      const future = (await exportAs({ since: '2999-01-01T00:00:00Z' }, { tenant: 'exp-a' })).value as Page;
      expect(future.entries).toEqual([]);
      const csv = (await exportAs({ format: 'csv', skill: 'admin.config.get' }, { tenant: 'exp-a' })).value as Page;
      const lines = (csv.csv as string).trimEnd().split('\r\n');
      expect(lines[0]).toMatch(/^"id","at","tenantId","userId","agent","runId","skill","action","decision","cause","outcome"/);
      expect(lines).toHaveLength(2);
      expect(lines[1]).toContain(',"exp-a","alice",');
      expect(lines[1]).toContain(',"admin.config.get","read","allowed","missing_permission","forbidden",');
    });

    it("refuses another tenant's audit to a tenant admin; a platform admin (allTenantsPermission) may name one", async () => {
      const refused = await exportAs({ tenant: 'exp-b' }, { tenant: 'exp-a' });
      expect(refused).toMatchObject({ ok: false, error: { reason: 'audit_other_tenant' } });
      for (const tenant of ['constructor', '__proto__']) {
        const odd = await exportAs({ tenant }, { tenant: 'exp-a' });
        expect(odd.error).toMatchObject({ reason: 'audit_other_tenant' });
      }
      const platform = await exportAs({ tenant: 'exp-b' }, { tenant: 'exp-a', permissions: [...ALL, 'platform:audit'] });
      expect((platform.value as Page).entries.map((e) => e.tenantId)).toEqual(['exp-b', 'exp-b', 'exp-b', 'exp-b']);
      // The tenant of the context, whatever the model says: the export of 'exp-b' by exp-b holds no exp-a entry.
      const own = (await exportAs({}, { tenant: 'exp-b' })).value as Page;
      expect(new Set(own.entries.map((e) => e.tenantId))).toEqual(new Set(['exp-b']));
    });

    it('refuses filters it cannot read, naming the field', async () => {
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ since: 'yesterday' }, 'since'],
        [{ since: '2026-12-02T00:00:00Z', until: '2026-12-01T00:00:00Z' }, 'since'],
        [{ cursor: 'abc' }, 'cursor'],
      ];
      for (const [args, field] of bad)
        expect((await exportAs(args, { tenant: 'exp-a' })).error).toMatchObject({ reason: 'audit_filter_invalid', field });
      for (const args of [{ kind: 'weird' }, { limit: 0 }, { limit: 1001 }, { format: 'xml' }, { tenantId: 'exp-b' }])
        expect((await exportAs(args, { tenant: 'exp-a' })).error).toMatchObject({ error: 'InvalidArguments' });
    });
  });
});
