import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { ENTITIES, leaksBeta } from '../__fixtures__/business-fixture';
import { BusinessApp, startBusinessApp } from '../__fixtures__/business-app';
import { ALLOWED_FUNCTIONS, ROW_FUNCTION_NAMES } from './sql-allowlists';
import { quoteName } from './sql-printer';

/**
 * What a name in db.query stands for is pg_catalog's, whatever the application's database holds beside it.
 * The application here has what applications have: a SECURITY DEFINER helper that shares a name with a
 * built-in (public.round(double precision, integer), which pg_catalog lacks, so it is the better match),
 * operators and a type of the same names in public, and an extension's schema on the search path ahead
 * of pg_catalog. Each helper reads the table `secrets`, which holds tenant beta's secret: an answer that
 * shows it, or a count that shows the helper ran, is the attack working.
 */
const HOSTILE = [
  'CREATE SCHEMA ext',
  `CREATE FUNCTION public.round(double precision, integer) RETURNS text LANGUAGE sql SECURITY DEFINER
     AS $$ SELECT pg_catalog.string_agg(value, ',') FROM public.secrets $$`,
  `CREATE FUNCTION ext.lower(pg_catalog.text) RETURNS pg_catalog.text LANGUAGE sql SECURITY DEFINER
     AS $$ SELECT pg_catalog.string_agg(value, ',') FROM public.secrets $$`,
  `CREATE FUNCTION public.always(double precision, integer) RETURNS boolean LANGUAGE sql SECURITY DEFINER
     AS $$ SELECT EXISTS (SELECT 1 FROM public.secrets) $$`,
  'CREATE OPERATOR public.= (LEFTARG = double precision, RIGHTARG = integer, FUNCTION = public.always)',
  'CREATE OPERATOR public.>= (LEFTARG = double precision, RIGHTARG = integer, FUNCTION = public.always)',
  'CREATE OPERATOR public.<= (LEFTARG = double precision, RIGHTARG = integer, FUNCTION = public.always)',
  // A type named like an allowed one, whose every value fails: a cast that resolves to it fails the statement.
  'CREATE DOMAIN public.jsonb AS pg_catalog.text CHECK (false)',
  'CREATE DOMAIN ext.date AS pg_catalog.text CHECK (false)',
  // json documents of both tenants, for json access.
  'CREATE TABLE docs (id integer PRIMARY KEY, tenant_id pg_catalog.text NOT NULL, body pg_catalog.jsonb NOT NULL)',
  'CREATE INDEX docs_tenant_idx ON docs (tenant_id)',
  `INSERT INTO docs VALUES (1, 'alpha', '{"tag": "a", "lines": [{"sku": "A-1", "qty": 2}, {"sku": "A-2", "qty": 3}]}'::pg_catalog.jsonb),
                           (100001, 'beta', '{"tag": "a", "lines": [{"sku": "BETA-1", "qty": 50000}]}'::pg_catalog.jsonb)`,
];

/** Argument shapes a model writes, and the signature of the hostile overload that matches each best. */
const SHAPES: ReadonlyArray<{ args: string; params: string; values: unknown[] }> = [
  { args: 'o.amount::float8, ?::int', params: 'double precision, integer', values: [2] },
  { args: 'o.note', params: 'pg_catalog.text', values: [] },
  { args: 'o.note, ?', params: 'pg_catalog.text, pg_catalog.text', values: ['a'] },
  { args: 'o.id, o.id', params: 'integer, integer', values: [] },
  { args: 'o.created_at', params: 'timestamp with time zone', values: [] },
];

/**
 * The class, not the one case: for every allow-listed name, an overload in public (a better match than
 * pg_catalog's, or the only one) and one in the extension's schema, each SECURITY DEFINER and each
 * answering with tenant beta's secret.
 */
async function prepareHostile(ds: DataSource): Promise<void> {
  for (const sql of HOSTILE) await ds.query(sql);
  for (const name of ALLOWED_FUNCTIONS)
    for (const schema of ['public', 'ext'])
      for (const shape of SHAPES)
        await ds.query(
          `CREATE OR REPLACE FUNCTION ${schema}.${quoteName(name)}(${shape.params}) RETURNS pg_catalog.text LANGUAGE sql SECURITY DEFINER
             AS $$ SELECT pg_catalog.string_agg(value, ',') FROM public.secrets $$`,
        );
}

/** Each suite runs twice: the guard alone, then with the reader role and row-level security behind it. */
const FENCE_MODES = [
  ['without the second fence', 'off'],
  ['with the second fence (the reader role)', 'required'],
] as const;
const fenceOption = (mode: (typeof FENCE_MODES)[number][1]) =>
  mode === 'off' ? { fence: { mode: 'off' as const, role: 'zmodu_reader' } } : {};

const ENTITIES_AND_DOCS = [...ENTITIES, { name: 'doc', table: 'docs', pk: 'id', tenantColumn: 'tenant_id' }];

describe.each(FENCE_MODES)('db.query names only pg_catalog, %s', (_label, mode) => {
  let t: BusinessApp;

  beforeAll(async () => {
    t = await startBusinessApp({ entities: ENTITIES_AND_DOCS, ...fenceOption(mode) }, 60, {
      searchPath: 'public, ext, pg_catalog',
      prepare: prepareHostile,
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  const query = (sql: string, args: unknown[] = []) => t.call('db.query', { sql, args });
  const rows = async (sql: string, args: unknown[] = []) => {
    const r = await query(sql, args);
    expect([sql, r.ok, r.error]).toEqual([sql, true, undefined]);
    expect(leaksBeta(r.value)).toBe(false);
    return (r.value as { rows: Record<string, unknown>[] }).rows;
  };
  const count = async (sql: string, args: unknown[] = []) => Number((await rows(sql, args))[0].n);

  it('round(x::float8, ?) does not reach public.round(double precision, integer) (attack: SECURITY DEFINER helper)', async () => {
    for (const sql of [
      'SELECT round(o.amount::float8, ?) AS r FROM orders o',
      'SELECT round(count(*) * ?::float8 / ?::float8, ?) AS r FROM orders',
    ]) {
      const args = sql.includes('count') ? [100, 60, 1] : [2];
      const r = await query(sql, args);
      expect(leaksBeta(r)).toBe(false);
      // pg_catalog has no round(double precision, integer): the statement fails, as it would without the helper.
      expect([r.ok, r.error?.reason]).toEqual([false, 'undefined_function']);
    }
    // The analyst's query written for pg_catalog's round(numeric, integer) gets the right answer.
    expect(await rows('SELECT round((count(*) * ?::float8 / ?::float8)::numeric, ?) AS r FROM orders', [100, 60, 1])).toEqual([
      { r: '100.0' },
    ]);
  });

  it('an operator written, or implied by IN, BETWEEN or NULLIF, is pg_catalog s (attack: public.=, >=, <= on float8 and int)', async () => {
    // No order has a negative amount: a count above 0 is the hostile operator answering true.
    expect(await count('SELECT count(*) AS n FROM orders o WHERE o.amount::float8 = ?::int', [-1])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM orders o WHERE o.amount::float8 IN (?::int, ?::int)', [-1, -2])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM orders o WHERE o.amount::float8 BETWEEN ?::int AND ?::int', [-2, -1])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM orders o WHERE NULLIF(o.amount::float8, ?::int) IS NULL', [-1])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM orders o WHERE (CASE o.amount::float8 WHEN ?::int THEN ? END) = ?', [-1, 1, 1])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM orders o WHERE o.amount::float8 IS NOT DISTINCT FROM ?::int', [-1])).toBe(0);
  });

  it('a type and a function of a schema ahead of pg_catalog on the search path are not used (attack: extension schema)', async () => {
    expect(await count('SELECT count(*) AS n FROM orders WHERE ?::jsonb IS NOT NULL', ['{}'])).toBe(60);
    expect(await count('SELECT count(*) AS n FROM orders WHERE created_at::date >= ?::date', ['2026-01-01'])).toBe(60);
    const lowered = await rows('SELECT lower(o.note) AS l FROM orders o ORDER BY o.id LIMIT ?', [2]);
    expect(lowered).toEqual([{ l: 'alpha note 0' }, { l: 'alpha note 1' }]);
  });

  it('a qualified column named like a function is refused, not called on the whole row (attack: o.pg_typeof, o.quote_literal)', async () => {
    for (const name of ['pg_typeof', 'quote_literal', 'to_json', 'count']) {
      const r = await query(`SELECT o.${name} FROM orders o`);
      expect([name, r.ok, r.error?.reason]).toEqual([name, false, 'column_not_allowed']);
    }
  });

  it('a json set function s value qualified with a function name is refused, not called on the value (attack: line.current_setting, line.pg_read_file)', async () => {
    // A set function of scalars stands for its value: line.f is f(line), any function of pg_catalog that takes a text.
    const attacks: Array<[string, unknown[]]> = [
      ['SELECT line.current_setting AS v FROM jsonb_array_elements_text(?::jsonb) AS line', ['["server_version"]']],
      ['SELECT line.pg_read_file AS v FROM jsonb_array_elements_text(?::jsonb) AS line', ['["postgresql.conf"]']],
      ['SELECT k.pg_relation_size AS v FROM jsonb_object_keys(?::jsonb) AS k', ['{"public.secrets": 1}']],
      ['SELECT jsonb_object_keys.pg_get_viewdef AS v FROM jsonb_object_keys(?::jsonb)', ['{"pg_catalog.pg_roles": 1}']],
      ['SELECT d.id FROM docs d, json_array_elements_text(?::json) AS t(v) WHERE t.pg_database_size IS NOT NULL', ['["postgres"]']],
      // The same name in another scope, where it has that column, does not make it a column here.
      [
        'SELECT (SELECT pg_catalog.count(*) FROM jsonb_array_elements_text(?::jsonb) AS x(current_setting)) AS n, x.current_setting AS v FROM jsonb_array_elements_text(?::jsonb) AS x',
        ['[]', '["server_version"]'],
      ],
    ];
    for (const [sql, args] of attacks) {
      const r = await query(sql, args);
      expect([sql, r.ok, r.error?.reason]).toEqual([sql, false, 'column_not_allowed']);
    }
    // Its column, by its name or the one given it, and its value: read as before.
    expect(await rows('SELECT t.value AS a, t AS b FROM jsonb_array_elements_text(?::jsonb) AS t', ['["x"]'])).toEqual([
      { a: 'x', b: 'x' },
    ]);
    expect(await rows('SELECT t.v FROM jsonb_array_elements_text(?::jsonb) AS t(v)', ['["x"]'])).toEqual([{ v: 'x' }]);
    expect(await rows('SELECT k.k FROM jsonb_object_keys(?::jsonb) AS k', ['{"x": 1}'])).toEqual([{ k: 'x' }]);
    expect(await rows('SELECT t.v, t.n FROM jsonb_array_elements_text(?::jsonb) WITH ORDINALITY AS t(v, n)', ['["x"]'])).toEqual([
      { v: 'x', n: '1' },
    ]);
  });

  it('reads json of the caller s documents only: ->, ->>, @> and a json set function in FROM', async () => {
    expect(
      await rows(
        'SELECT d.id, line ->> ? AS sku, (line ->> ?)::int AS qty FROM docs d, jsonb_array_elements(d.body -> ?) AS line ORDER BY 2',
        ['sku', 'qty', 'lines'],
      ),
    ).toEqual([
      { id: 1, sku: 'A-1', qty: 2 },
      { id: 1, sku: 'A-2', qty: 3 },
    ]);
    expect(await count('SELECT count(*) AS n FROM docs WHERE body @> ?::jsonb', ['{"tag": "a"}'])).toBe(1);
    expect(await rows('SELECT body #>> ?::text[] AS sku FROM docs', [['lines', '0', 'sku']])).toEqual([{ sku: 'A-1' }]);
  });

  it('property: no allow-listed name, however written, reaches a same-named overload of another schema', async () => {
    const names = [...ALLOWED_FUNCTIONS];
    const spelling = fc.constantFrom(
      (n: string) => n,
      (n: string) => quoteName(n),
      (n: string) => `pg_catalog.${quoteName(n)}`,
      (n: string) => `public.${quoteName(n)}`,
      (n: string) => `ext.${quoteName(n)}`,
      (n: string) => n.toUpperCase(),
    );
    const where = fc.constantFrom('select', 'where', 'order', 'subquery', 'cte');
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), fc.constantFrom(...SHAPES), spelling, where, async (name, shape, spell, at) => {
        const call = `${spell(name)}(${shape.args})`;
        const sql = {
          select: `SELECT ${call} AS v FROM orders o`,
          where: `SELECT o.id FROM orders o WHERE ${call} IS NOT NULL`,
          order: `SELECT o.id FROM orders o ORDER BY ${call}`,
          subquery: `SELECT (SELECT ${call} FROM orders o LIMIT ?) AS v`,
          cte: `WITH w AS (SELECT ${call} AS v FROM orders o) SELECT * FROM w`,
        }[at];
        const r = await query(sql, at === 'subquery' ? [...shape.values, 1] : shape.values);
        if (r.ok) accepted++;
        expect([sql, leaksBeta(r)]).toEqual([sql, false]);
      }),
      { seed: 20261202, numRuns: 300 },
    );
    // Not a vacuous property: many of the calls are pg_catalog's and run.
    expect(accepted).toBeGreaterThan(15);
  });

  it('the list of names a whole row can be passed to holds every such function of the connected server', async () => {
    const found = await t.ds.query(
      `SELECT DISTINCT p.proname::pg_catalog.text AS name FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace AND p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1
          AND (p.proargtypes[0] IN ('record'::pg_catalog.regtype, '"any"'::pg_catalog.regtype, 'anyelement'::pg_catalog.regtype,
                                    'anycompatible'::pg_catalog.regtype, 'anynonarray'::pg_catalog.regtype,
                                    'anycompatiblenonarray'::pg_catalog.regtype)
               OR p.provariadic = '"any"'::pg_catalog.regtype)`,
    );
    expect(found.length).toBeGreaterThan(20);
    expect(found.map((r: { name: string }) => r.name).filter((n: string) => !ROW_FUNCTION_NAMES.has(n))).toEqual([]);
  });

  it('syntax newer than the server is refused with what to write instead, or runs where the server has it', async () => {
    const [{ v }] = await t.ds.query("SELECT pg_catalog.current_setting('server_version_num') AS v");
    const r = await query('SELECT o.created_at AT LOCAL AS at FROM orders o LIMIT ?', [1]);
    if (Number(v) < 170000) {
      expect([r.ok, r.error?.reason]).toEqual([false, 'unsupported_syntax']);
      expect(r.error?.message).toMatch(
        /AT LOCAL needs PostgreSQL 17 or later, and this database runs PostgreSQL \d+\.\d+: write AT TIME ZONE/,
      );
    } else expect([r.ok, (r.value as { rowCount: number }).rowCount]).toEqual([true, 1]);
  });
});

/**
 * An application's own types, and what their owner may attach to them: casts (to json, which to_json and every json
 * function call; to text, implicit), and a domain's CHECK. Each attachment is a SECURITY DEFINER function that reads
 * `secrets` (beta's secret among them), or tells whether a value is one of them.
 */
const SECRET_TEXT = "SELECT pg_catalog.string_agg(value, ',') FROM public.secrets";
const APP_TYPES = [
  "CREATE TYPE public.mood AS ENUM ('ok', 'bad')",
  `CREATE FUNCTION public.mood_json(public.mood) RETURNS pg_catalog.json LANGUAGE sql SECURITY DEFINER
     AS $$ SELECT pg_catalog.to_json((${SECRET_TEXT})) $$`,
  'CREATE CAST (public.mood AS pg_catalog.json) WITH FUNCTION public.mood_json(public.mood)',
  `CREATE FUNCTION public.mood_jsonb(public.mood) RETURNS pg_catalog.jsonb LANGUAGE sql SECURITY DEFINER
     AS $$ SELECT pg_catalog.to_jsonb((${SECRET_TEXT})) $$`,
  'CREATE CAST (public.mood AS pg_catalog.jsonb) WITH FUNCTION public.mood_jsonb(public.mood)',
  'CREATE TYPE public.sku_ref AS (code pg_catalog.text)',
  `CREATE FUNCTION public.sku_text(public.sku_ref) RETURNS pg_catalog.text LANGUAGE sql SECURITY DEFINER AS $$ ${SECRET_TEXT} $$`,
  'CREATE CAST (public.sku_ref AS pg_catalog.text) WITH FUNCTION public.sku_text(public.sku_ref) AS IMPLICIT',
  `CREATE FUNCTION public.not_a_secret(pg_catalog.text) RETURNS boolean LANGUAGE sql SECURITY DEFINER
     AS $$ SELECT NOT EXISTS (SELECT 1 FROM public.secrets WHERE value OPERATOR(pg_catalog.=) $1) $$`,
  'CREATE DOMAIN public.code AS pg_catalog.text CHECK (public.not_a_secret(VALUE))',
  'CREATE DOMAIN public.amount AS pg_catalog.numeric(12, 2) CHECK (VALUE OPERATOR(pg_catalog.>=) 0)',
  'ALTER TABLE orders ADD COLUMN mood public.mood, ADD COLUMN ref public.sku_ref, ADD COLUMN code public.code, ADD COLUMN net public.amount',
  "UPDATE orders SET mood = 'ok', ref = ROW('x')::public.sku_ref, code = 'c', net = amount",
  'ALTER TABLE customers ADD COLUMN mood public.mood',
  "UPDATE customers SET mood = 'bad'",
];

describe.each(FENCE_MODES)("db.query reads an application's types as PostgreSQL's, %s", (_label, mode) => {
  let t: BusinessApp;

  beforeAll(async () => {
    const entities = ENTITIES.map((e) => (e.name === 'customer' ? { ...e, columns: [...(e.columns ?? []), 'mood'] } : e));
    t = await startBusinessApp({ entities, ...fenceOption(mode) }, 5, {
      prepare: async (ds) => {
        for (const sql of APP_TYPES) await ds.query(sql);
      },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  const rows = async (sql: string, args: unknown[] = []) => {
    const r = await t.call('db.query', { sql, args });
    expect([sql, r.ok, r.error]).toEqual([sql, true, undefined]);
    expect([sql, leaksBeta(r.value) || JSON.stringify(r.value).includes('secret')]).toEqual([sql, false]);
    return (r.value as { rows: Record<string, unknown>[] }).rows;
  };

  it('to_json and every json function read an enum as its text, not through its cast to json (attack: a SECURITY DEFINER cast of the type to json, which PostgreSQL calls without checking EXECUTE)', async () => {
    const one = 'FROM orders o ORDER BY o.id LIMIT ?';
    expect(await rows(`SELECT to_json(o.mood) AS j, to_jsonb(o.mood) AS b ${one}`, [1])).toEqual([{ j: 'ok', b: 'ok' }]);
    expect(await rows(`SELECT json_build_object(?::text, o.mood) AS j ${one}`, ['m', 1])).toEqual([{ j: { m: 'ok' } }]);
    expect(await rows(`SELECT to_jsonb(COALESCE(o.mood, ?)) AS j ${one}`, ['bad', 1])).toEqual([{ j: 'ok' }]);
    expect(await rows('SELECT json_agg(o.mood) AS j, jsonb_object_agg(o.id, o.mood) AS k FROM orders o WHERE o.id = ?', [1])).toEqual([
      { j: ['ok'], k: { '1': 'ok' } },
    ]);
    // The whole row, and a declared column of another table.
    const [whole] = await rows(`SELECT row_to_json(o) AS j ${one}`, [1]);
    expect((whole.j as Record<string, unknown>).mood).toBe('ok');
    expect(await rows('SELECT to_json(c.mood) AS j FROM customers c ORDER BY c.id LIMIT ?', [1])).toEqual([{ j: 'bad' }]);
  });

  it('a composite is its text, and its casts are not called (attack: lower(o.ref) through an implicit SECURITY DEFINER cast to text)', async () => {
    expect(await rows('SELECT lower(o.ref) AS l, o.ref::text AS t, o.ref AS r FROM orders o ORDER BY o.id LIMIT ?', [1])).toEqual([
      { l: '(x)', t: '(x)', r: '(x)' },
    ]);
  });

  it("a domain is its base type: its CHECK never runs on the caller's values (attack: ARRAY[o.code] = ? asks public.not_a_secret about each)", async () => {
    // Typed as an array of the domain, each element of the arg would be checked: an error for beta's secret, none for a guess.
    for (const guess of ['BETA secret', 'no secret'])
      expect(await rows('SELECT pg_catalog.count(*) AS n FROM orders o WHERE ARRAY[o.code] = ?', [`{"${guess}"}`])).toEqual([{ n: '0' }]);
    expect(await rows('SELECT sum(o.net) AS s, max(o.code) AS c FROM orders o')).toEqual([{ s: '422.50', c: 'c' }]);
  });
});

describe('a numeric tenant column takes one spelling of each tenant id', () => {
  let t: BusinessApp;

  beforeAll(async () => {
    t = await startBusinessApp(
      { entities: [{ name: 'ledger', table: 'ledger', pk: 'id', tenantColumn: 'tenant_no' }], kpis: [], reports: [] },
      3,
      {
        prepare: async (ds) => {
          await ds.query('CREATE TABLE ledger (id integer PRIMARY KEY, tenant_no numeric NOT NULL, amount integer NOT NULL)');
          await ds.query('CREATE INDEX ledger_tenant_idx ON ledger (tenant_no)');
          await ds.query('INSERT INTO ledger VALUES (1, 1, 10), (2, 1, 20), (3, 2, 50000)');
        },
      },
    );
  });

  afterAll(async () => {
    await t?.close();
  });

  it('reads tenant 1 as 1, and refuses 1.0, 1e0 and 01 (attack: other spellings of tenant 1 read its rows)', async () => {
    const ok = await t.call('db.query', { sql: 'SELECT sum(amount) AS s FROM ledger', args: [] }, '1');
    expect([ok.ok, (ok.value as { rows: unknown[] }).rows]).toEqual([true, [{ s: '30' }]]);
    for (const spelling of ['1.0', '1e0', '01', '1.00', '+1']) {
      const r = await t.call('db.query', { sql: 'SELECT sum(amount) AS s FROM ledger', args: [] }, spelling);
      expect([spelling, r.ok, r.error?.reason]).toEqual([spelling, false, 'invalid_tenant']);
      const list = await t.call('entity.list', { entity: 'ledger' }, spelling);
      expect([spelling, list.ok, list.error?.reason]).toEqual([spelling, false, 'invalid_tenant']);
    }
  });
});
