import { DataSource } from 'typeorm';
import { ALPHA, FENCE_TABLES, leaksBeta, seedBusinessData } from '../__fixtures__/business-fixture';
import { openTestDataSource, TestDatabase } from '@zmodu/db/testing';
import { auditDataModel } from '../audit/data-audit';
import { runReadOnly } from '../query/read-only-query';
import { fenceSettings, installTenantFence, readFenceKey, tenantFenceStatus, uninstallTenantFence } from './tenant-fence';

const TABLES = FENCE_TABLES;

const BETA_NOTES = "SELECT pg_catalog.string_agg(note, ',') FROM public.orders WHERE tenant_id OPERATOR(pg_catalog.=) 'beta'";
const BETA_SUM = "SELECT pg_catalog.sum(amount)::pg_catalog.float8 FROM public.orders WHERE tenant_id OPERATOR(pg_catalog.=) 'beta'";

/**
 * An application's helpers and an extension's objects that share a name with PostgreSQL's own, or match an
 * argument list better: each SECURITY DEFINER (it runs as its owner, past row-level security) and answering with
 * tenant beta's rows. `ext` stands for a schema an extension was installed in, on the application's search_path.
 */
const HOSTILE = [
  'CREATE SCHEMA ext',
  // As extensions' schemas are: everyone may look names up in it.
  'GRANT USAGE ON SCHEMA ext TO PUBLIC',
  // round(float8, int): pg_catalog has round(float8) and round(numeric, int) only, so this one matches best.
  `CREATE FUNCTION public.round(double precision, integer) RETURNS double precision LANGUAGE sql SECURITY DEFINER AS $$ ${BETA_SUM} $$`,
  `CREATE FUNCTION ext.trunc(double precision, integer) RETURNS double precision LANGUAGE sql SECURITY DEFINER AS $$ ${BETA_SUM} $$`,
  // float8 + int4: pg_catalog has float8 + float8 (after a cast) only.
  `CREATE FUNCTION public.leak_plus(double precision, integer) RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ ${BETA_NOTES} $$`,
  'CREATE OPERATOR public.+ (LEFTARG = double precision, RIGHTARG = integer, FUNCTION = public.leak_plus)',
  // text || int4: pg_catalog has text || anynonarray, a polymorphic (worse) match.
  `CREATE FUNCTION ext.leak_cat(text, integer) RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ ${BETA_NOTES} $$`,
  'CREATE OPERATOR ext.|| (LEFTARG = text, RIGHTARG = integer, FUNCTION = ext.leak_cat)',
  // Same names and argument types as pg_catalog's: chosen where ext comes before pg_catalog on the search_path.
  `CREATE FUNCTION ext.lower(text) RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ ${BETA_NOTES} $$`,
  'CREATE DOMAIN ext.int4 AS pg_catalog.text',
  // text = text that is always true: in a policy made under this search_path, the reader would see every tenant.
  'CREATE FUNCTION ext.always(text, text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT true $$',
  'CREATE OPERATOR ext.= (LEFTARG = text, RIGHTARG = text, FUNCTION = ext.always)',
];

/** The application's session puts the extension's schema first, before pg_catalog (explicitly listed, so searched last). */
const HOSTILE_PATH = 'ext, public, pg_catalog';

/** One connection (on a server, a pool of one), so that a session setting made here is the one every statement meets. */
async function openHostile(): Promise<{ db: TestDatabase; ds: DataSource; close: () => Promise<void> }> {
  const opened = await openTestDataSource({ extra: { max: 1 } } as object);
  await seedBusinessData(opened.ds, 20);
  for (const sql of HOSTILE) await opened.ds.query(sql);
  return opened;
}

async function fencedOn(ds: DataSource, role: string, text: string) {
  const key = (await readFenceKey(ds))!;
  const fence = { role, settings: (pid: number) => fenceSettings(key, pid, ALPHA) };
  try {
    return { ok: true as const, ...(await runReadOnly(ds, text, [], { maxRows: 100, timeoutMs: 3000 }, fence)) };
  } catch (err) {
    return { ok: false as const, reason: (err as { reason?: string }).reason };
  }
}

const executable = async (ds: DataSource, role: string, fn: string) =>
  (await ds.query(`SELECT pg_catalog.has_function_privilege($1, $2, 'EXECUTE') AS can`, [role, fn]))[0].can as boolean;

describe('db.query second fence: names that resolve outside pg_catalog (run as the reader, the rewrite bypassed)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let close: () => Promise<void>;
  let role: string;
  const fenced = (text: string) => fencedOn(ds, role, text);

  beforeAll(async () => {
    ({ db, ds, close } = await openHostile());
    role = db.fenceRole;
    await ds.query(`SET search_path TO ${HOSTILE_PATH}`);
    await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
  });

  afterAll(async () => {
    await close?.();
  });

  it("round(1.5::float8, 2) is not the application's SECURITY DEFINER public.round, by name or qualified (attack: a same-named helper reads beta's rows)", async () => {
    const bare = await fenced('SELECT round(1.5::float8, 2) AS r');
    expect(bare).toEqual({ ok: false, reason: 'undefined_function' }); // pg_catalog has no round(float8, int)
    for (const sql of ['SELECT public.round(1.5::float8, 2) AS r', 'SELECT ext.trunc(1.5::float8, 2) AS r', "SELECT ext.lower('X') AS r"]) {
      const r = await fenced(sql);
      expect({ sql, r }).toEqual({ sql, r: { ok: false, reason: 'permission_denied' } });
    }
    expect(await executable(ds, role, 'public.round(double precision, integer)')).toBe(false);
    // The application itself keeps its helper.
    expect(leaksBeta(await ds.query('SELECT public.round(1.5::float8, 2) AS r'))).toBe(true);
  });

  it("operators mean pg_catalog's: float8 + int and text || int are PostgreSQL's, and the hostile ones refused when named (attack: a better-matching operator)", async () => {
    expect(await fenced('SELECT 1.5::float8 + 2 AS r')).toMatchObject({ ok: true, rows: [{ r: 3.5 }] });
    expect(await fenced("SELECT 'a'::text || 1 AS r")).toMatchObject({ ok: true, rows: [{ r: 'a1' }] });
    for (const sql of ['SELECT 1.5::float8 OPERATOR(public.+) 2 AS r', "SELECT 'a'::text OPERATOR(ext.||) 1 AS r"]) {
      const r = await fenced(sql);
      expect({ sql, r }).toEqual({ sql, r: { ok: false, reason: 'permission_denied' } });
    }
  });

  it('same-named functions and types of a schema before pg_catalog on the search_path are not reached (attack: ext.lower, ext.int4)', async () => {
    const r = await fenced("SELECT lower('X') AS l, '007'::int4 AS i, pg_typeof('007'::int4)::text AS t");
    expect(r).toMatchObject({ ok: true, rows: [{ l: 'x', i: 7, t: 'integer' }] });
    expect(leaksBeta(r)).toBe(false);
    // The application's own session still resolves them its way (its search_path is its business).
    expect(await ds.query("SELECT '007'::int4 AS i")).toEqual([{ i: '007' }]);
  });

  it("the policies were made under pg_catalog's operators, whatever the installer's search_path held (attack: an always-true text = text)", async () => {
    const r = await fenced("SELECT count(*) AS n FROM public.orders WHERE tenant_id = 'beta'");
    expect(r).toMatchObject({ ok: true, rows: [{ n: '0' }] });
    const all = await fenced('SELECT note FROM public.orders');
    expect(all.ok && all.rows.length).toBe(20);
    expect(leaksBeta(all)).toBe(false);
  });

  it('the install took advisory locks and setseed from the reader; a session lock cannot be taken (attack: pg_advisory_lock survives the rollback)', async () => {
    for (const sql of ['SELECT pg_advisory_lock(4242)', 'SELECT pg_try_advisory_xact_lock(4242)', 'SELECT setseed(0.5)']) {
      const r = await fenced(sql);
      expect({ sql, r }).toEqual({ sql, r: { ok: false, reason: 'permission_denied' } });
    }
    // The application role keeps them (the library's own stores take transaction-level advisory locks).
    expect(await ds.query('SELECT pg_try_advisory_xact_lock(4242) AS got')).toEqual([{ got: true }]);
  });

  it('status and audit report a function made later by another owner, with what to do, and a new install revokes it', async () => {
    const vendor = `${db.name}_vendor`;
    await ds.query(`CREATE ROLE ${vendor} NOLOGIN`);
    await ds.query(`CREATE SCHEMA vendor AUTHORIZATION ${vendor}`);
    await ds.transaction(async (m) => {
      await m.query(`SET LOCAL ROLE ${vendor}`);
      await m.query('CREATE FUNCTION vendor.peek() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$');
    });
    try {
      expect(await executable(ds, role, 'vendor.peek()')).toBe(true);
      const status = await tenantFenceStatus(ds, TABLES, { role });
      expect(status.installed).toBe(true);
      expect(status.warnings).toEqual([expect.stringMatching(/may execute 1 function\(s\) outside pg_catalog \(vendor\.peek\(\)\)/)]);
      const audit = await auditDataModel(ds, [], { readerRole: role });
      expect(audit.findings).toEqual([
        expect.objectContaining({
          code: 'reader_function',
          table: 'vendor',
          detail: expect.stringContaining(`may execute 1 function(s) of schema vendor owned by ${vendor}: vendor.peek()`),
          fix: expect.stringContaining(`as ${vendor} or a superuser: REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA vendor FROM PUBLIC`),
        }),
      ]);
      const [{ me }] = await ds.query('SELECT current_user::text AS me');
      const actions = await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
      expect(actions.map((a) => a.what)).toContain(
        `revoked EXECUTE from PUBLIC on 1 function(s) outside pg_catalog (granted to ${me}): ${role} cannot call them; other roles that call them need it granted`,
      );
      expect((await auditDataModel(ds, [], { readerRole: role })).findings).toEqual([]);
      expect((await tenantFenceStatus(ds, TABLES, { role })).warnings).toEqual([]);
    } finally {
      await ds.query('DROP SCHEMA vendor CASCADE');
      await ds.query(`DROP ROLE ${vendor}`);
    }
  });

  it('the audit names a cast to json that the reader runs past the revocation (attack: to_json of an enum calls a SECURITY DEFINER cast, unchecked)', async () => {
    await ds.query("CREATE TYPE public.mood AS ENUM ('ok')");
    await ds.query(
      `CREATE FUNCTION public.mood_json(public.mood) RETURNS pg_catalog.json LANGUAGE sql SECURITY DEFINER AS $$ SELECT pg_catalog.to_json((${BETA_NOTES})) $$`,
    );
    await ds.query('CREATE CAST (public.mood AS pg_catalog.json) WITH FUNCTION public.mood_json(public.mood)');
    try {
      expect(await executable(ds, role, 'public.mood_json(public.mood)')).toBe(false);
      const finding = expect.objectContaining({
        code: 'json_cast',
        table: 'public.mood',
        detail: expect.stringContaining('the cast from public.mood to json runs public.mood_json(mood)'),
        fix: 'DROP CAST (public.mood AS json), or make public.mood_json(mood) SECURITY INVOKER and let it read nothing but its argument',
      });
      const [{ version }] = await ds.query("SELECT current_setting('server_version_num')::int AS version");
      const run = await fenced("SELECT pg_catalog.to_json('ok'::public.mood) AS j");
      if (version < 180000) {
        // Before PostgreSQL 18 the json functions call a cast's function without checking EXECUTE: the fence cannot hold
        // here (db.query reads a column of such a type as its text, so only a statement that got past the rewrite gets
        // this far), and the audit names it.
        expect(leaksBeta(run)).toBe(true);
        expect((await auditDataModel(ds, [], { readerRole: role })).findings).toEqual([finding]);
      } else {
        // PostgreSQL 18 checks EXECUTE there: the revocation holds, and the cast is a finding only while the reader may
        // execute its function.
        expect(run).toEqual({ ok: false, reason: 'permission_denied' });
        expect((await auditDataModel(ds, [], { readerRole: role })).findings).toEqual([]);
        await ds.query(`GRANT EXECUTE ON FUNCTION public.mood_json(public.mood) TO ${role}`);
        expect(leaksBeta(await fenced("SELECT pg_catalog.to_json('ok'::public.mood) AS j"))).toBe(true);
        // Named twice: as a function the reader may call, and as the cast that runs it.
        expect((await auditDataModel(ds, [], { readerRole: role })).findings).toEqual([
          expect.objectContaining({ code: 'reader_function', detail: expect.stringContaining('public.mood_json(mood)') }),
          expect.objectContaining({ code: 'json_cast', detail: expect.stringContaining(`reader role ${role} may EXECUTE it`) }),
        ]);
      }
    } finally {
      await ds.query('DROP TYPE public.mood CASCADE');
    }
  });

  it('uninstall gives PUBLIC back what the install took, and a new install takes it again', async () => {
    await ds.transaction((m) => uninstallTenantFence(m, TABLES, { role }));
    expect(await executable(ds, 'public', 'public.round(double precision, integer)')).toBe(true);
    expect(await executable(ds, 'public', 'pg_catalog.pg_advisory_lock(bigint)')).toBe(true);
    // The default privileges are PostgreSQL's own again (an entry equal to the default is removed).
    expect(await ds.query("SELECT count(*)::int AS n FROM pg_default_acl WHERE defaclobjtype OPERATOR(pg_catalog.=) 'f'")).toEqual([
      { n: 0 },
    ]);
    await ds.transaction((m) => installTenantFence(m, TABLES, { role }));
    expect(await executable(ds, role, 'public.round(double precision, integer)')).toBe(false);
    expect((await tenantFenceStatus(ds, TABLES, { role })).installed).toBe(true);
  });
});

describe('db.query second fence installed by a role that is no superuser', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let close: () => Promise<void>;
  let role: string;
  let installer: string;
  let actions: string[];
  const fenced = (text: string) => fencedOn(ds, role, text);

  beforeAll(async () => {
    ({ db, ds, close } = await openHostile());
    role = db.fenceRole;
    installer = `${db.name}_installer`;
    // It owns the tables (REVOKE ALL ON ALL TABLES IN SCHEMA needs them all) and its helper; the extension's functions are a superuser's.
    await ds.query(`CREATE ROLE ${installer} NOLOGIN NOSUPERUSER CREATEROLE`);
    await ds.query(`DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO ${installer}', current_database()); END $$`);
    for (const t of ['orders', 'customers', 'order_lines', 'currencies', 'secrets'])
      await ds.query(`ALTER TABLE public.${t} OWNER TO ${installer}`);
    await ds.query(`ALTER FUNCTION public.round(double precision, integer) OWNER TO ${installer}`);
    await ds.query(`SET search_path TO ${HOSTILE_PATH}`);
    actions = await ds.transaction(async (m) => {
      await m.query(`SET LOCAL ROLE ${installer}`);
      return (await installTenantFence(m, TABLES, { role })).map((a) => `${a.kind} ${a.what}`);
    });
  });

  afterAll(async () => {
    await close?.();
    // Roles are the server's: this one outlives its database there.
    if (db?.kind === 'postgres') {
      const { Client } = await import('pg');
      const admin = new Client({ connectionString: process.env.ZMODU_TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP ROLE IF EXISTS ${installer}`).finally(() => admin.end());
    }
  });

  it('revokes what it owns, and names what it cannot revoke, with what to do (attack: the same round() as the reader)', async () => {
    expect(actions).toContain(
      `changed revoked EXECUTE from PUBLIC on 1 function(s) outside pg_catalog (granted to ${installer}): ${role} cannot call them; other roles that call them need it granted`,
    );
    expect(actions).toContainEqual(
      expect.stringMatching(
        /^note .* may still execute \d+ function\(s\) outside pg_catalog that .* may not revoke \(.*ext\.trunc\(double precision, integer\)/,
      ),
    );
    expect(actions).toContainEqual(
      expect.stringMatching(
        /^note .* may still take advisory locks .*only a superuser can change that: REVOKE EXECUTE ON FUNCTION pg_catalog\.pg_advisory_lock\(bigint\)/,
      ),
    );
    expect(actions).toContain(`changed functions ${installer} creates from now on are not executable by PUBLIC`);
    expect(await fenced('SELECT public.round(1.5::float8, 2) AS r')).toEqual({ ok: false, reason: 'permission_denied' });
    // Unqualified, neither the helper nor the extension's function is in reach (search_path is pinned).
    expect(await fenced('SELECT round(1.5::float8, 2) AS r, trunc(1.5::float8, 2) AS t')).toEqual({
      ok: false,
      reason: 'undefined_function',
    });
    // Qualified, the superuser's function is still executable: the status and the audit say so.
    expect(leaksBeta(await fenced('SELECT ext.trunc(1.5::float8, 2) AS t'))).toBe(true);
    const status = await tenantFenceStatus(ds, TABLES, { role });
    expect(status.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/may execute set_config/),
        expect.stringMatching(/may take advisory locks and set the random seed/),
        expect.stringMatching(
          /may execute \d+ function\(s\) outside pg_catalog \(.*ext\.trunc\(double precision, integer\).*run install-fence again as their owner/,
        ),
      ]),
    );
    const audit = await auditDataModel(ds, [], { readerRole: role });
    const ext = audit.findings.find((f) => f.table === 'ext');
    expect(ext).toMatchObject({
      code: 'reader_function',
      fix: expect.stringMatching(/^as \S+ or a superuser: REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA ext FROM PUBLIC/),
    });
    expect(ext!.detail).toMatch(/ext\.trunc\(double precision, integer\).*SECURITY DEFINER/);
  });

  it('a session advisory lock the reader takes does not outlive its statement on the pooled connection (attack: pg_advisory_lock survives the rollback)', async () => {
    const held = async () =>
      Number(
        (
          await ds.query(
            // The embedded database's one session shows no pid in pg_locks.
            "SELECT count(*) AS n FROM pg_locks WHERE locktype OPERATOR(pg_catalog.=) 'advisory' AND (pid = pg_backend_pid() OR pid IS NULL)",
          )
        )[0].n,
      );
    expect(await fenced('SELECT pg_advisory_lock(4242) IS NOT NULL AS locked')).toMatchObject({ ok: true, rows: [{ locked: true }] });
    expect(await held()).toBe(0);
    // Also when the statement fails after taking it (the cleanup path).
    const failed = await fenced('SELECT pg_advisory_lock(4243), 1 / (pg_backend_pid() - pg_backend_pid()) AS boom');
    expect(failed).toEqual({ ok: false, reason: 'division_by_zero' });
    expect(await held()).toBe(0);
  });
});
