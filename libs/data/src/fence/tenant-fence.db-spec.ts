import { DataSource } from 'typeorm';
import { ALPHA, BETA, FENCE_TABLES, fingerprint, leaksBeta, seedBusinessData } from '../__fixtures__/business-fixture';
import { openTestDataSource, TestDatabase } from '@zmodu/db/testing';
import { runReadOnly } from '../query/read-only-query';
import {
  fenceSettings,
  installTenantFence,
  readFenceKey,
  tenantFenceMigration,
  tenantFenceStatus,
  uninstallTenantFence,
} from './tenant-fence';

const TABLES = FENCE_TABLES;

describe('db.query second fence in the database', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let close: () => Promise<void>;
  let role: string;
  let before: string;

  beforeAll(async () => {
    ({ db, ds, close } = await openTestDataSource());
    await seedBusinessData(ds, 30);
    role = db.fenceRole;
    await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
    before = await fingerprint(ds);
  });

  afterAll(async () => {
    await close?.();
  });

  const alphaCount = async (table: string) =>
    Number((await ds.query(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1`, [ALPHA]))[0].n);

  /**
   * A statement as the fence alone sees it: the rewrite is bypassed, the raw text runs under the reader role with
   * search_path pinned to pg_catalog, as db.query runs it (so its tables are schema-qualified, as the rewrite prints them).
   */
  async function fenced(text: string, values: unknown[] = [], settings?: (pid: number) => Record<string, string>) {
    const key = (await readFenceKey(ds))!;
    const fence = { role, settings: settings ?? ((pid: number) => fenceSettings(key, pid, ALPHA)) };
    try {
      return { ok: true as const, ...(await runReadOnly(ds, text, values, { maxRows: 1000, timeoutMs: 3000 }, fence)) };
    } catch (err) {
      return { ok: false as const, reason: (err as { reason?: string }).reason };
    }
  }

  describe('install', () => {
    it('reports it is in place, and a second install changes nothing that matters', async () => {
      expect(await tenantFenceStatus(ds, TABLES, { role })).toEqual({ installed: true, role, problems: [], warnings: [] });
      const again = await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
      const kept = again.filter((a) => a.kind === 'kept').map((a) => a.what);
      expect(kept).toEqual(expect.arrayContaining([`role ${role}`, 'the fence key', 'policies of "public"."orders" (tenant_id text)']));
      expect(again.some((a) => a.kind === 'created')).toBe(false);
    });

    it('finds what is missing, says what to do, and a new install repairs it', async () => {
      await ds.query('ALTER TABLE orders DISABLE ROW LEVEL SECURITY');
      await ds.query('DROP POLICY zmodu_fence ON customers');
      const status = await tenantFenceStatus(ds, TABLES, { role });
      expect(status.installed).toBe(false);
      expect(status.problems.join('\n')).toMatch(/row-level security is off on "public"."orders": run `zmodu ai install-fence/);
      expect(status.problems.join('\n')).toMatch(/policies of "public"."customers" are missing/);
      await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
      expect((await tenantFenceStatus(ds, TABLES, { role })).installed).toBe(true);
    });

    it('is all or nothing: an install that fails half-way (a missing table) leaves not even its role', async () => {
      const atomic = `${role}_atomic`;
      await expect(
        installTenantFence(ds, [...TABLES, { table: 'no_such_table', tenantColumn: 'tenant_id' }], { role: atomic }),
      ).rejects.toThrow(/no_such_table" does not exist: create it before installing the fence/);
      expect(await ds.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [atomic])).toEqual([]);
      expect((await tenantFenceStatus(ds, TABLES, { role })).installed).toBe(true);
    });

    it('refuses a reader role that would bypass row-level security', async () => {
      const bypass = `${role}_bypass`;
      await ds.query(`CREATE ROLE ${bypass} NOLOGIN BYPASSRLS`);
      try {
        await expect(ds.transaction((m) => installTenantFence(m, TABLES, { role: bypass }))).rejects.toThrow(/bypasses row-level security/);
      } finally {
        await ds.query(`DROP ROLE ${bypass}`);
      }
    });

    it('a missing fence is reported for a database that never had one', async () => {
      const status = await tenantFenceStatus(ds, TABLES, { role: `${role}_never` });
      expect(status.installed).toBe(false);
      expect(status.problems[0]).toMatch(/does not exist: run `zmodu ai install-fence --config \.\.\.` or the fence migration/);
    });
  });

  describe('the fence alone (the rewrite bypassed)', () => {
    afterEach(async () => {
      expect(await fingerprint(ds)).toBe(before);
    });

    it('returns only the caller rows of a tenant table read whole', async () => {
      const r = await fenced('SELECT * FROM public.orders');
      expect(r.ok && r.rows.length).toBe(await alphaCount('orders'));
      expect(leaksBeta(r)).toBe(false);
    });

    it('a predicate naming the other tenant finds nothing', async () => {
      const r = await fenced("SELECT * FROM public.orders WHERE tenant_id = 'beta'");
      expect(r.ok && r.rows).toEqual([]);
      const joined = await fenced(
        'SELECT c.name, o.note FROM public.customers c JOIN public.orders o ON o.customer_id = c.id UNION ALL SELECT sku, tenant_id FROM public.order_lines',
      );
      expect(joined.ok).toBe(true);
      expect(leaksBeta(joined)).toBe(false);
    });

    it('set_config to the other tenant inside the statement is refused (and without the MAC it would admit no row)', async () => {
      const r = await fenced(
        `SELECT set_config('zmodu.tenant_id', '${BETA}', true) AS t, (SELECT count(*) FROM public.orders) AS n, (SELECT string_agg(note, ',') FROM public.orders) AS notes`,
      );
      expect(r).toEqual({ ok: false, reason: 'permission_denied' });
      // The MAC is the fence where set_config is still granted (an installer that is not a superuser): see the next case.
    });

    it('a MAC under a wrong key, for another backend, or none at all admits nothing', async () => {
      const key = (await readFenceKey(ds))!;
      for (const settings of [
        (pid: number) => fenceSettings('not the key', pid, BETA),
        (pid: number) => fenceSettings(key, pid + 1, ALPHA),
        () => ({ 'zmodu.tenant_id': ALPHA }),
        () => ({}),
      ]) {
        const r = await fenced('SELECT count(*) AS n FROM public.orders', [], settings);
        expect(r.ok && r.rows).toEqual([{ n: '0' }]);
      }
    });

    it('cannot leave its role: set_config of role or session_authorization is refused, directly or through SQL run by a function', async () => {
      for (const sql of [
        "SELECT set_config('role', 'none', true), (SELECT count(*) FROM public.orders) AS n",
        "SELECT set_config('session_authorization', current_user, true)",
        "SELECT query_to_xml('SELECT set_config(''role'', ''none'', true)', true, false, '')::text",
        "SELECT query_to_xml('RESET ROLE', true, false, '')::text",
        "SELECT query_to_xml('SELECT * FROM public.secrets', true, false, '')::text",
      ]) {
        const r = await fenced(sql);
        expect({ sql, ok: r.ok }).toEqual({ sql, ok: false });
        expect(leaksBeta(r)).toBe(false);
      }
      // pg_settings does not show the reader its role: an UPDATE of it changes nothing.
      const viaSettings = await fenced(
        "WITH x AS (UPDATE pg_settings SET setting = 'none' WHERE name = 'role') SELECT current_user::text AS u",
      );
      expect(viaSettings.ok && viaSettings.rows).toEqual([{ u: role }]);
    });

    it('the install said it took set_config from PUBLIC, and the reader has no way to it', async () => {
      const actions = await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
      expect(actions.map((a) => a.what)).toContain(`${role} may not execute set_config (it cannot leave its role)`);
      const [{ can }] = await ds.query(
        `SELECT has_function_privilege($1, 'pg_catalog.set_config(text, text, boolean)', 'EXECUTE') AS can`,
        [role],
      );
      expect(can).toBe(false);
    });

    it('cannot read an unregistered table, an undeclared column or the fence key', async () => {
      expect(await fenced('SELECT * FROM public.secrets')).toEqual({ ok: false, reason: 'permission_denied' });
      expect(await fenced('SELECT email FROM public.customers')).toEqual({ ok: false, reason: 'permission_denied' });
      expect(await fenced('SELECT key FROM zmodu_fence.secret')).toEqual({ ok: false, reason: 'permission_denied' });
    });

    it('cannot write: read only, and without a write grant even in a writable transaction', async () => {
      expect((await fenced("UPDATE orders SET note = 'x'")).ok).toBe(false);
      expect((await fenced('WITH x AS (DELETE FROM public.orders RETURNING 1) SELECT count(*) FROM x')).ok).toBe(false);
      const runner = ds.createQueryRunner();
      await runner.connect();
      try {
        await runner.startTransaction();
        await runner.query(`SET LOCAL ROLE ${role}`);
        await expect(runner.query("UPDATE orders SET note = 'x' WHERE tenant_id = 'alpha'")).rejects.toMatchObject({
          driverError: { code: '42501' },
        });
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    });

    it('a shared table stays readable whole', async () => {
      const r = await fenced('SELECT code FROM public.currencies ORDER BY code');
      expect(r.ok && r.rows).toEqual([{ code: 'EUR' }, { code: 'USD' }]);
    });
  });

  describe('other roles', () => {
    it('keep what they had on a table whose row-level security the fence turned on, even after a repair', async () => {
      const other = `${role}_other`;
      await ds.query(`CREATE ROLE ${other} NOLOGIN`);
      await ds.query(`GRANT SELECT, UPDATE ON orders TO ${other}`);
      // Someone drops the fence's policy; a reinstall must not take the table's row-level security for the application's own.
      await ds.query('DROP POLICY zmodu_fence ON orders');
      await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
      try {
        const both = (await alphaCount('orders')) * 2;
        await ds
          .transaction(async (m) => {
            await m.query(`SET LOCAL ROLE ${other}`);
            const [{ n }] = await m.query('SELECT count(*)::int AS n FROM public.orders');
            expect(n).toBe(both);
            await m.query("UPDATE orders SET note = note WHERE tenant_id = 'beta'");
            throw new Error('rollback');
          })
          .catch((e: Error) => expect(e.message).toBe('rollback'));
      } finally {
        await ds.query(`REVOKE ALL ON orders FROM ${other}`);
        await ds.query(`DROP ROLE ${other}`);
      }
    });

    it('keep their own row-level security on a table that had it (no pass-through added)', async () => {
      const other = `${role}_own`;
      await ds.query('CREATE TABLE own_rls (id int PRIMARY KEY, tenant_id text NOT NULL, owner_name text NOT NULL)');
      await ds.query("INSERT INTO own_rls VALUES (1, 'alpha', 'ann'), (2, 'beta', 'bob')");
      await ds.query('ALTER TABLE own_rls ENABLE ROW LEVEL SECURITY');
      await ds.query(`CREATE ROLE ${other} NOLOGIN`);
      await ds.query(`GRANT SELECT ON own_rls TO ${other}`);
      await ds.query(`CREATE POLICY app_own ON own_rls FOR SELECT TO ${other} USING (owner_name = 'ann')`);
      try {
        const tables = [...TABLES, { table: 'own_rls', tenantColumn: 'tenant_id' }];
        await ds.transaction((m) => installTenantFence(m, tables, { role }));
        const seen = await ds.transaction(async (m) => {
          await m.query(`SET LOCAL ROLE ${other}`);
          return m.query('SELECT id FROM public.own_rls ORDER BY id');
        });
        expect(seen).toEqual([{ id: 1 }]);
        const r = await fenced('SELECT id FROM public.own_rls');
        expect(r.ok && r.rows).toEqual([{ id: 1 }]);
      } finally {
        await ds.query('DROP TABLE own_rls');
        await ds.query(`DROP ROLE ${other}`);
      }
    });
  });

  it('a migration made with tenantFenceMigration installs it in up and removes it in down', async () => {
    const Migration = tenantFenceMigration('ZmoduFence1764470000000', TABLES, { role });
    const migration = new Migration();
    expect(migration.name).toBe('ZmoduFence1764470000000');
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await migration.down(runner);
      expect((await tenantFenceStatus(runner, TABLES, { role })).installed).toBe(false);
      expect((await runner.query("SELECT relrowsecurity FROM pg_class WHERE relname = 'orders'"))[0].relrowsecurity).toBe(false);
      await migration.up(runner);
      expect((await tenantFenceStatus(runner, TABLES, { role })).installed).toBe(true);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    expect(() => tenantFenceMigration('NoTimestamp', TABLES)).toThrow(/13-digit timestamp/);
  });

  it('an uninstall given fewer tables still removes the fence from every table it was on (no row-level security left without its policy)', async () => {
    const other = `${role}_partial`;
    await ds.query(`CREATE ROLE ${other} NOLOGIN`);
    await ds.query(`GRANT SELECT ON customers TO ${other}`);
    try {
      await ds.transaction((m) =>
        uninstallTenantFence(
          m,
          TABLES.filter((t) => t.table === 'orders'),
          { role },
        ),
      );
      const [{ rls }] = await ds.query("SELECT relrowsecurity AS rls FROM pg_class WHERE relname = 'customers'");
      expect(rls).toBe(false);
      const seen = await ds.transaction(async (m) => {
        await m.query(`SET LOCAL ROLE ${other}`);
        return m.query('SELECT count(*)::int AS n FROM public.customers');
      });
      expect(seen[0].n).toBeGreaterThan(0);
    } finally {
      await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
      await ds.query(`REVOKE ALL ON customers FROM ${other}`);
      await ds.query(`DROP ROLE ${other}`);
    }
    expect((await tenantFenceStatus(ds, TABLES, { role })).installed).toBe(true);
  });

  it('a policy the application adds later is not ORed away: status says so, and a new install sits beside it', async () => {
    const other = `${role}_later`;
    await ds.query(`CREATE ROLE ${other} NOLOGIN`);
    await ds.query(`GRANT SELECT ON orders TO ${other}`);
    await ds.query(`CREATE POLICY app_alpha_only ON orders FOR SELECT TO ${other} USING (tenant_id = 'alpha')`);
    try {
      const status = await tenantFenceStatus(ds, TABLES, { role });
      expect(status.installed).toBe(false);
      expect(status.problems.join('\n')).toMatch(
        /"public"."orders" has policies of the application \(app_alpha_only\) that the fence's permissive policy ORs away/,
      );
      const actions = await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
      expect(actions.map((a) => a.what)).toContain(
        '"public"."orders" has policies of the application now (app_alpha_only): the fence sits beside them',
      );
      expect((await tenantFenceStatus(ds, TABLES, { role })).installed).toBe(true);
      const seen = await ds.transaction(async (m) => {
        await m.query(`SET LOCAL ROLE ${other}`);
        return m.query('SELECT DISTINCT tenant_id FROM public.orders');
      });
      expect(seen).toEqual([{ tenant_id: ALPHA }]);
      const r = await fenced('SELECT count(*) AS n FROM public.orders');
      expect(r.ok && r.rows).toEqual([{ n: String(await alphaCount('orders')) }]);
      // Uninstalled, row-level security stays on: the application's policy relies on it.
      const removed = await ds.transaction((m) => uninstallTenantFence(m, TABLES, { role }));
      expect(removed.map((a) => a.what)).toContain(
        "left row-level security on for public.orders: the application's policies (app_alpha_only) rely on it now",
      );
      const [{ rls }] = await ds.query("SELECT relrowsecurity AS rls FROM pg_class WHERE relname = 'orders'");
      expect(rls).toBe(true);
    } finally {
      await ds.query('DROP POLICY IF EXISTS app_alpha_only ON orders');
      await ds.query('ALTER TABLE orders DISABLE ROW LEVEL SECURITY');
      await ds.query(`REVOKE ALL ON orders FROM ${other}`);
      await ds.query(`DROP ROLE ${other}`);
      await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
    }
    expect((await tenantFenceStatus(ds, TABLES, { role })).installed).toBe(true);
  });

  it('uninstall leaves the tables as they were', async () => {
    const actions = await ds.transaction((m) => uninstallTenantFence(m, TABLES, { role }));
    expect(actions.at(-1)!.what).toMatch(/dropped schema zmodu_fence/);
    expect((await tenantFenceStatus(ds, TABLES, { role })).installed).toBe(false);
    await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
  });
});
