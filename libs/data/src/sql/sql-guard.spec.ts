import fc from 'fast-check';
import { parseSync } from 'libpg-query';
import { bindPlaceholders } from './placeholders';
import * as parser from './pg-parser';
import { loadSqlParser } from './pg-parser';
import { ALLOWED_FUNCTIONS, ROW_FUNCTION_NAMES } from './sql-allowlists';
import { SqlGuard } from './sql-guard';
import * as printer from './sql-printer';
import { printSelect } from './sql-printer';
import { SqlRefusal } from './sql-refusal';
import { HOSTILE_NAMES, POSITIONS } from '../__fixtures__/hostile-identifiers';

// The parser and the printer, wrapped so that a test can watch or replace them (a module's exports are read-only
// bindings: jest.spyOn cannot redefine them). They run the real code unless a test says otherwise.
jest.mock('./pg-parser', () => {
  const actual = jest.requireActual<typeof import('./pg-parser')>('./pg-parser');
  return { ...actual, parseSql: jest.fn(actual.parseSql) };
});
jest.mock('./sql-printer', () => {
  const actual = jest.requireActual<typeof import('./sql-printer')>('./sql-printer');
  return { ...actual, printSelect: jest.fn(actual.printSelect) };
});
const realPrintSelect = jest.requireActual<typeof import('./sql-printer')>('./sql-printer').printSelect;

const guard = new SqlGuard([
  { table: 'orders', tenantColumn: 'tenant_id' },
  { table: 'customers', tenantColumn: 'tenant_id', columns: ['id', 'name'] },
  { table: 'currencies', tenantColumn: null },
  { table: 'legacy' },
]);

const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof SqlRefusal) return err.reason;
    throw err;
  }
  return 'accepted';
};

describe('bindPlaceholders', () => {
  it('turns ? into $n outside quoted identifiers', () => {
    expect(bindPlaceholders('SELECT * FROM "a?b" WHERE x = ? AND y = ?')).toEqual({
      text: 'SELECT * FROM "a?b" WHERE x = $1 AND y = $2',
      count: 2,
    });
    expect(bindPlaceholders('SELECT $2, $1')).toEqual({ text: 'SELECT $2, $1', count: 2 });
    expect(bindPlaceholders('SELECT a$1 FROM t').count).toBe(0);
  });

  it.each([
    ["SELECT 'x'", 'literal_not_allowed'],
    ['SELECT $$x$$', 'literal_not_allowed'],
    ['SELECT 1 -- c', 'comment_not_allowed'],
    ['SELECT /* c */ 1', 'comment_not_allowed'],
    ['SELECT 1; SELECT 2', 'multiple_statements'],
    ['SELECT ?, $1', 'bad_placeholder'],
    ['SELECT "unterminated', 'syntax_error'],
  ])('%s is refused (%s)', (sql, why) => {
    expect(reason(() => bindPlaceholders(sql))).toBe(why);
  });
});

describe('SqlGuard', () => {
  beforeAll(async () => {
    await loadSqlParser();
  });

  it('replaces each tenant table by a fenced subquery filtered on the tenant, bound as the last parameter', () => {
    const p = guard.prepare({
      sql: 'SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.amount > ?',
      args: [5],
      tenantId: 't1',
      maxRows: 20,
    });
    // The caller's value, one tenant parameter per table (each takes its column's type), then the row cap.
    expect(p.values).toEqual([5, 't1', 't1', 21]);
    expect(p.tables).toEqual(['customers', 'orders']);
    expect(p.text).toContain(
      '(SELECT * FROM "public"."orders" AS "_zt_t" WHERE ("_zt_t"."tenant_id" OPERATOR("pg_catalog".=) $2) OFFSET 0) AS "o"',
    );
    expect(p.text).toContain(
      '(SELECT "_zt_t"."id", "_zt_t"."name" FROM "public"."customers" AS "_zt_t" WHERE ("_zt_t"."tenant_id" OPERATOR("pg_catalog".=) $3) OFFSET 0) AS "c"',
    );
    expect(p.text).toMatch(/^SELECT \* FROM \(.*\) AS "_zt_result" LIMIT \$4$/);
  });

  it('reads a shared table unfiltered and refuses one whose tenant column is unknown', () => {
    expect(guard.prepare({ sql: 'SELECT * FROM currencies', tenantId: 't1', maxRows: 5 }).values).toEqual([6]);
    expect(reason(() => guard.prepare({ sql: 'SELECT * FROM legacy', tenantId: 't1' }))).toBe('TenantScopeUnavailable');
  });

  it('allows NULL, booleans and positional GROUP BY / ORDER BY, and nothing else literal', () => {
    expect(
      reason(() =>
        guard.prepare({ sql: 'SELECT id FROM orders WHERE paid = true AND note IS NOT NULL GROUP BY 1 ORDER BY 1', tenantId: 't' }),
      ),
    ).toBe('accepted');
    expect(reason(() => guard.prepare({ sql: 'SELECT id + 1 FROM orders', tenantId: 't' }))).toBe('literal_not_allowed');
    expect(reason(() => guard.prepare({ sql: 'SELECT id FROM orders LIMIT 3', tenantId: 't' }))).toBe('literal_not_allowed');
  });

  it('checks the arguments', () => {
    expect(reason(() => guard.prepare({ sql: 'SELECT ?', args: 'x', tenantId: 't' }))).toBe('bad_request');
    expect(reason(() => guard.prepare({ sql: 'SELECT ?', args: [{ a: 1 }], tenantId: 't' }))).toBe('bad_request');
    expect(reason(() => guard.prepare({ sql: 'SELECT ?', args: [], tenantId: 't' }))).toBe('arg_count');
    expect(reason(() => guard.prepare({ sql: '', tenantId: 't' }))).toBe('bad_request');
    expect(reason(() => guard.prepare({ sql: `SELECT ${'x, '.repeat(5000)}x`, tenantId: 't' }))).toBe('too_complex');
  });

  it('reports a syntax error with the parser message', () => {
    expect(reason(() => guard.prepare({ sql: 'SELEC * FROM orders', tenantId: 't' }))).toBe('syntax_error');
  });
});

// ---------------------------------------------------------------- what runs is what was checked

const TABLES = [
  { table: 'orders', tenantColumn: 'tenant_id' },
  { table: 'order_lines', tenantColumn: 'tenant_id' },
  { table: 'customers', tenantColumn: 'tenant_id', columns: ['id', 'name'] },
  { table: 'currencies', tenantColumn: null },
];
const REGISTERED = new Set(TABLES.map((t) => t.table));

/** A name as SQL writes it quoted: every `"` doubled. */
const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Names the executed text reads: every table and every function, from its own parse. */
function reads(text: string): { tables: string[]; functions: string[]; names: Set<string> } {
  const tables: string[] = [];
  const functions: string[] = [];
  const names = new Set<string>();
  const ctes = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if (o.CommonTableExpr) ctes.add(String((o.CommonTableExpr as Record<string, unknown>).ctename));
    if (o.RangeVar) tables.push(String((o.RangeVar as Record<string, unknown>).relname));
    if (o.FuncCall)
      functions.push(
        ((o.FuncCall as { funcname: Array<{ String: { sval: string } }> }).funcname ?? []).map((p) => p.String.sval).join('.'),
      );
    for (const [k, x] of Object.entries(o)) if (typeof x === 'string' && k !== 'location') names.add(x);
    Object.values(o).forEach(walk);
  };
  const tree = parseSync(text);
  expect(tree.stmts).toHaveLength(1);
  walk(tree.stmts![0].stmt);
  // A reference to a CTE is a RangeVar too; the guard resolves CTEs by scope, which reads() need not redo:
  // a name that is a CTE and also a registered table is counted as a table.
  return { tables: tables.filter((t) => REGISTERED.has(t) || !ctes.has(t)), functions, names };
}

const defects: string[] = [];
const strict = new SqlGuard(TABLES, { onDefect: (m) => defects.push(m) });
/** Functions the guard itself writes into a statement: its bounds on what a search and a containment read. */
const GUARD_BOUNDS: ReadonlySet<string> = new Set(['pg_catalog.varchar', 'pg_catalog.pg_column_size']);

/**
 * Prepare; when accepted, check what would run: one statement, only scoped registered tables, allowed functions, the
 * printer's fixpoint.
 */
function prepareAndInspect(sql: string, args: unknown[] = []) {
  let prepared;
  try {
    prepared = strict.prepare({ sql, args, tenantId: 'alpha', maxRows: 10 });
  } catch (err) {
    if (!(err instanceof SqlRefusal)) throw err;
    expect(err.reason).not.toBe('rewrite_mismatch');
    return { refused: err.reason };
  }
  const r = reads(prepared.text);
  for (const t of r.tables) expect(REGISTERED.has(t)).toBe(true);
  // SQL-syntax forms (EXTRACT, POSITION, TRIM, AT TIME ZONE...) parse as pg_catalog.<name>.
  for (const f of r.functions) expect(GUARD_BOUNDS.has(f) || ALLOWED_FUNCTIONS.has(f.replace(/^pg_catalog\./, ''))).toBe(true);
  // Every table is read through its scoped subquery: as many tenant parameters as tenant tables read.
  const tenantTables = r.tables.filter((t) => t !== 'currencies').length;
  expect((prepared.text.match(/\("_zt_t"\."tenant_id" OPERATOR\("pg_catalog"\.=\) \$\d+\) OFFSET 0\)/g) ?? []).length).toBe(tenantTables);
  // Printing what the text parses to gives the same text: nothing in it was ever reinterpreted.
  const again = parseSync(prepared.text).stmts![0].stmt as unknown as { SelectStmt: Record<string, unknown> };
  expect(printSelect(again.SelectStmt)).toBe(prepared.text);
  return { refused: null, prepared, names: r.names };
}

describe('SqlGuard: only checked text runs', () => {
  beforeAll(async () => {
    await loadSqlParser();
  });
  afterEach(() => {
    expect(defects).toEqual([]);
  });

  it('the issue attack: a quoted window name cannot carry SQL (it stays one name)', () => {
    const name = '() n,(SELECT string_agg(name,$$,$$) FROM public.customers) x';
    const r = prepareAndInspect(`SELECT count(*) OVER ${quoted(name)} FROM customers`);
    expect(r.refused).toBeNull();
    expect(r.names!.has(name)).toBe(true);
    expect(r.prepared!.text).toContain(`OVER ${quoted(name)}`);
  });

  describe.each(POSITIONS)('%s', (_position, template) => {
    it.each(HOSTILE_NAMES)('holds %j as one identifier', (name) => {
      const sql = template.replace(/\bN\b/g, () => quoted(name));
      const args = Array.from({ length: (template.match(/\?/g) ?? []).length }, () => 1);
      const r = prepareAndInspect(sql, args);
      if (r.refused) {
        // Only an empty name is refused here (PostgreSQL has no zero-length identifiers).
        expect(name === '""' || r.refused === 'syntax_error').toBe(true);
        return;
      }
      expect(r.names!.has(name)).toBe(true);
    });
  });

  it.each([
    ['table', 'SELECT * FROM N', 'table_not_allowed'],
    ['schema', 'SELECT * FROM N.orders', 'table_not_allowed'],
    ['function', 'SELECT N(id) FROM orders', 'function_not_allowed'],
    ['type', 'SELECT ?::N', 'type_not_allowed'],
    ['EXTRACT field', 'SELECT extract(N FROM created_at) FROM orders', 'function_not_allowed'],
  ])('a hostile %s name is refused, not printed', (_what, template, reason) => {
    for (const name of HOSTILE_NAMES.filter((n) => n !== '""')) {
      const sql = template.replace(/\bN\b/g, () => quoted(name));
      expect(
        prepareAndInspect(
          sql,
          (sql.match(/\?/g) ?? []).map(() => 1),
        ).refused,
      ).toBe(reason);
    }
  });

  it('a name longer than PostgreSQL keeps (63 bytes) is held as the truncated name the server uses', () => {
    const name = `${'x'.repeat(70)}) UNION SELECT * FROM secrets`;
    const r = prepareAndInspect(`SELECT count(*) OVER ${quoted(name)} FROM orders`);
    expect(r.refused).toBeNull();
    expect(r.names!.has(name.slice(0, 63))).toBe(true);
  });

  it('a printed statement that parses differently is refused as rewrite_mismatch and reported as a defect', () => {
    const seen: string[] = [];
    const g = new SqlGuard(TABLES, { onDefect: (m) => seen.push(m) });
    const spy = jest.mocked(printer.printSelect).mockImplementation((tree) => realPrintSelect(tree).replace(' OFFSET 0', ' OFFSET 1'));
    try {
      expect(reason(() => g.prepare({ sql: 'SELECT id FROM orders', tenantId: 'alpha' }))).toBe('rewrite_mismatch');
      spy.mockImplementation(() => 'SELECT 1; SELECT * FROM secrets');
      expect(reason(() => g.prepare({ sql: 'SELECT note FROM orders', tenantId: 'alpha' }))).toBe('rewrite_mismatch');
      spy.mockImplementation(() => 'SELECT (');
      expect(reason(() => g.prepare({ sql: 'SELECT amount FROM orders', tenantId: 'alpha' }))).toBe('rewrite_mismatch');
    } finally {
      spy.mockImplementation(realPrintSelect);
    }
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatch(/db\.query defect: the printed statement parses differently at \$/);
  });

  it('a CTE whose name differs from a table only in case does not switch off the rewrite (PostgreSQL matches CTE names exactly)', () => {
    for (const sql of ['WITH "SECRETS" AS (SELECT) SELECT * FROM secrets', 'WITH "Secrets" AS (SELECT) SELECT * FROM secrets s'])
      expect(prepareAndInspect(sql).refused).toBe('table_not_allowed');
    for (const sql of [
      'WITH "ORDERS" AS (SELECT) SELECT id, tenant_id, note FROM orders',
      'WITH "Customers" AS (SELECT) SELECT * FROM customers',
    ]) {
      const r = prepareAndInspect(sql);
      expect(r.refused).toBeNull();
      expect(r.prepared!.text).toMatch(/\("_zt_t"\."tenant_id" OPERATOR\("pg_catalog"\.=\) \$1\) OFFSET 0\)/);
    }
    // The CTE named exactly is the CTE.
    const cte = prepareAndInspect('WITH "SECRETS" AS (SELECT id FROM orders) SELECT * FROM "SECRETS"');
    expect(cte.refused).toBeNull();
  });

  it('function, type and EXTRACT field names are matched exactly, as PostgreSQL resolves them', () => {
    expect(prepareAndInspect('SELECT "LOWER"(note) FROM orders').refused).toBe('function_not_allowed');
    expect(prepareAndInspect('SELECT "Count"(*) FROM orders').refused).toBe('function_not_allowed');
    expect(prepareAndInspect('SELECT ?::"INT4"', [1]).refused).toBe('type_not_allowed');
    expect(prepareAndInspect('SELECT ?::"Text"', [1]).refused).toBe('type_not_allowed');
    expect(prepareAndInspect('SELECT extract("YEAR" FROM created_at) FROM orders').refused).toBe('function_not_allowed');
    expect(
      prepareAndInspect('SELECT LOWER(note), COUNT(*), ?::TEXT, EXTRACT(YEAR FROM created_at) FROM orders GROUP BY 1, 3, 4', [1]).refused,
    ).toBeNull();
  });

  it('a list goes in one parameter cast to an array of a plain type; other array forms stay refused', () => {
    const arrays = (sql: string, args: unknown[]) => reason(() => strict.prepare({ sql, args, tenantId: 'alpha' }));
    for (const sql of [
      'SELECT id FROM orders WHERE status = ANY(?::text[])',
      'SELECT id FROM orders WHERE id = ANY(CAST(? AS int[]))',
      'SELECT id FROM orders WHERE id <> ALL(?::bigint[]) AND note = ANY(?::varchar(20)[])',
      'SELECT id FROM orders WHERE created_at = ANY(?::timestamptz ARRAY)',
      'SELECT id FROM orders WHERE id = ANY(ARRAY[?, ?]::int[])',
      'SELECT ?::pg_catalog.int4[]',
    ])
      expect([sql, arrays(sql, [[1, 2], [3]].slice(0, (sql.match(/\?/g) ?? []).length))]).toEqual([sql, 'accepted']);
    for (const [sql, why] of [
      ['SELECT id FROM orders WHERE note = ANY(note::text[])', 'type_not_allowed'], // a column's text parsed as an array literal
      ['SELECT id FROM orders WHERE id = ANY((? || ?)::int[])', 'type_not_allowed'],
      ['SELECT id FROM orders WHERE id = ANY(upper(?)::int[])', 'type_not_allowed'],
      ["SELECT id FROM orders WHERE id = ANY('{1,2}'::int[])", 'literal_not_allowed'],
      ["SELECT id FROM orders WHERE id = ANY(CAST('{1,2}' AS int[]))", 'literal_not_allowed'],
      ['SELECT id FROM orders WHERE id = ANY(?::int[][])', 'type_not_allowed'],
      ['SELECT id FROM orders WHERE id = ANY(?::int[3])', 'type_not_allowed'],
      ['SELECT id FROM orders WHERE id = ANY(?::regclass[])', 'type_not_allowed'],
      ['SELECT id FROM orders WHERE id = ANY(?::oid[])', 'type_not_allowed'],
      ['SELECT id FROM orders WHERE tenant_id = ANY(?::"Text"[])', 'type_not_allowed'],
      ['SELECT ?::xml[]', 'type_not_allowed'],
      ['SELECT ?::name[]', 'type_not_allowed'],
    ] as const)
      expect([
        sql,
        arrays(
          sql,
          (sql.match(/\?/g) ?? []).map(() => [1]),
        ),
      ]).toEqual([sql, why]);
    // The printed statement keeps the array type and re-parses to the same tree (prepareAndInspect checks the fixpoint).
    const r = prepareAndInspect('SELECT id FROM orders WHERE status = ANY(?::text[]) AND id = ANY(CAST(? AS int[]))', [['open'], [1]]);
    expect(r.refused).toBeNull();
    expect(r.prepared!.text).toContain('CAST($1 AS "pg_catalog"."text"[])');
    expect(r.prepared!.text).toContain('CAST($2 AS "pg_catalog"."int4"[])');
    expect(r.prepared!.text).toMatch(/\("_zt_t"\."tenant_id" OPERATOR\("pg_catalog"\.=\) \$3\) OFFSET 0\)/);
  });

  it('a type size is a whole number of at most 10000 (char(10485760) would pad each value to 10 MB on the server)', () => {
    const sized = (sql: string, args: unknown[]) => reason(() => strict.prepare({ sql, args, tenantId: 'alpha' }));
    expect(sized('SELECT ?::varchar(100), ?::numeric(10, 0), ?::char(10000)', ['a', 1, 'b'])).toBe('accepted');
    for (const sql of [
      'SELECT ?::char(10485760)[] AS a',
      'SELECT ?::char(10001)',
      'SELECT ARRAY[?::bpchar(20000)]',
      'SELECT ?::varchar(10001)[]',
    ])
      expect([sql, sized(sql, [sql.includes('[]') ? ['x'] : 'x'])]).toEqual([sql, 'type_not_allowed']);
  });

  it('an array value holds strings, numbers or booleans, never null (the embedded database would read it as the text NULL)', () => {
    const list = (args: unknown[]) =>
      reason(() => strict.prepare({ sql: 'SELECT id FROM orders WHERE note = ANY(?::text[])', args, tenantId: 'alpha' }));
    expect(list([['x', 'y']])).toBe('accepted');
    expect(list([['x', null]])).toBe('bad_request');
    expect(list([null])).toBe('accepted');
  });

  it('a string argument nests [ and { at most 256 deep (cast to jsonb, 5000 levels crash the embedded database)', () => {
    const json = (arg: unknown) => reason(() => strict.prepare({ sql: 'SELECT ?::jsonb AS j', args: [arg], tenantId: 'alpha' }));
    expect(json(`${'['.repeat(256)}${']'.repeat(256)}`)).toBe('accepted');
    expect(json(`${'['.repeat(5000)}${']'.repeat(5000)}`)).toBe('value_too_large');
    expect(json(`${'{"a":'.repeat(300)}1${'}'.repeat(300)}`)).toBe('value_too_large');
    expect(json(['x', '['.repeat(300)])).toBe('value_too_large');
    expect(json('[]'.repeat(2000))).toBe('accepted'); // many, not deep
  });

  it('lpad and rpad take their length as a ? placeholder of at most 10000, checked on every call (plans are cached)', () => {
    const pad = (sql: string, args: unknown[]) => reason(() => strict.prepare({ sql, args, tenantId: 'alpha' }));
    expect(pad('SELECT lpad(note, ?) FROM orders', [10_000])).toBe('accepted');
    expect(pad('SELECT lpad(note, ?) FROM orders', [10_001])).toBe('value_too_large');
    expect(pad('SELECT lpad(note, ?) FROM orders', ['50000000'])).toBe('value_too_large');
    expect(pad('SELECT rpad(note, ?::integer, ?) FROM orders', ['12', '*'])).toBe('accepted');
    expect(pad('SELECT rpad(note, ?::integer, ?) FROM orders', [1e9, '*'])).toBe('value_too_large');
    expect(pad('SELECT rpad(note, ?, ?) FROM orders', ['lots', '*'])).toBe('value_too_large');
    expect(pad('SELECT lpad(note, id) FROM orders', [])).toBe('function_not_allowed');
    expect(pad('SELECT lpad(note, ? * ?) FROM orders', [100, 100])).toBe('function_not_allowed');
  });

  it('args are strings of at most 10000 characters (arrays too), and function calls nest at most 16 deep', () => {
    const call = (sql: string, args: unknown[]) => reason(() => strict.prepare({ sql, args, tenantId: 'alpha' }));
    expect(call('SELECT replace(note, ?, ?) FROM orders', ['a', 'x'.repeat(10_000)])).toBe('accepted');
    expect(call('SELECT replace(note, ?, ?) FROM orders', ['a', 'x'.repeat(10_001)])).toBe('value_too_large');
    expect(call('SELECT id FROM orders WHERE note = ANY (?)', [['short', 'y'.repeat(20_000)]])).toBe('value_too_large');
    const nest = (n: number) => `SELECT ${'upper('.repeat(n)}note${')'.repeat(n)} FROM orders`;
    expect(call(nest(16), [])).toBe('accepted');
    expect(call(nest(17), [])).toBe('too_complex');
  });

  it('joins tables whose tenant columns have different types: each gets a parameter of its own', () => {
    const g = new SqlGuard([
      { table: 'accounts', tenantColumn: 'tenant_no' },
      { table: 'notes', tenantColumn: 'tenant_key' },
    ]);
    const p = g.prepare({
      sql: 'SELECT a.id, n.body FROM accounts a JOIN notes n ON n.account_id = a.id JOIN accounts b ON b.id = a.id',
      tenantId: '7',
      maxRows: 5,
    });
    expect(p.text).toContain('("_zt_t"."tenant_no" OPERATOR("pg_catalog".=) $1)');
    expect(p.text).toContain('("_zt_t"."tenant_key" OPERATOR("pg_catalog".=) $2)');
    expect((p.text.match(/"tenant_no" OPERATOR\("pg_catalog"\.=\) \$1/g) ?? []).length).toBe(2); // the same table twice: one parameter
    expect(p.values).toEqual(['7', '7', 6]);
  });
});

describe('SqlGuard: bounded checker', () => {
  beforeAll(async () => {
    await loadSqlParser();
  });

  it.each([
    [
      '1,105 nested subqueries',
      () => {
        let s = 'SELECT id FROM orders';
        for (let i = 0; i < 1105; i++) s = `SELECT * FROM (${s}) x${i}`;
        return s;
      },
    ],
    ['65 nested parentheses', () => `SELECT ${'('.repeat(65)}id${')'.repeat(65)} FROM orders`],
    ['65 nested CASE', () => `SELECT ${'CASE WHEN paid THEN '.repeat(65)}id${' END'.repeat(65)} FROM orders`],
    ['a 3,000-term operator chain', () => `SELECT ${Array(3000).fill('id').join('+')} FROM orders`],
    ['2,000 NOTs', () => `SELECT id FROM orders WHERE ${'NOT '.repeat(2000)}paid`],
    ['10,001 characters', () => `SELECT id FROM orders WHERE ${'id = id AND '.repeat(1000)}paid${' '.repeat(50)}`.padEnd(10_001, ' ')],
  ])('%s is refused as too_complex, before the parser', (_name, make) => {
    const sql = make();
    const parse = jest.mocked(parser.parseSql);
    parse.mockClear();
    expect(reason(() => guard.prepare({ sql, tenantId: 't' }))).toBe('too_complex');
    expect(parse).not.toHaveBeenCalled();
    // The watch sees the parser when it does run (a statement of its own each time: the guard keeps what it prepared).
    guard.prepare({ sql: `SELECT id AS c${sql.length} FROM orders`, tenantId: 't' });
    expect(parse).toHaveBeenCalled();
  });

  it.each([
    ['700 UNIONs (overflowed the embedded database)', Array(700).fill('SELECT').join(' UNION ')],
    ['65 UNIONs', Array(66).fill('SELECT id FROM orders').join(' UNION ALL ')],
    [
      'a 190-way join (overflowed the embedded database)',
      `SELECT NULL FROM currencies c0 ${Array.from({ length: 190 }, (_, i) => `JOIN currencies c${i + 1} USING (code)`).join(' ')}`,
    ],
    ['65 tables in FROM', `SELECT NULL FROM ${Array.from({ length: 65 }, (_, i) => `currencies c${i}`).join(', ')}`],
  ])('%s is refused as too_complex', (_name, sql) => {
    expect(reason(() => guard.prepare({ sql, tenantId: 't' }))).toBe('too_complex');
  });

  it('64 UNIONs and 64 relations are still accepted', () => {
    expect(reason(() => guard.prepare({ sql: Array(65).fill('SELECT NULL').join(' UNION ALL '), tenantId: 't' }))).toBe('accepted');
    expect(
      reason(() =>
        guard.prepare({ sql: `SELECT NULL FROM ${Array.from({ length: 64 }, (_, i) => `currencies c${i}`).join(', ')}`, tenantId: 't' }),
      ),
    ).toBe('accepted');
  });

  it('64 levels of nesting are still accepted', () => {
    expect(reason(() => guard.prepare({ sql: `SELECT ${'('.repeat(60)}id${')'.repeat(60)} FROM orders`, tenantId: 't' }))).toBe('accepted');
  });
});

describe('SqlGuard: property over hostile identifiers', () => {
  beforeAll(async () => {
    await loadSqlParser();
  });

  const piece = fc.oneof(
    fc.constantFrom(
      '"',
      '""',
      '(',
      ')',
      ';',
      '--',
      '/*',
      '*/',
      ',',
      ' ',
      '$$',
      '$1',
      '?',
      "'",
      '\\',
      'SELECT ',
      ' FROM ',
      'secrets',
      'pg_roles',
      'UNION',
      'COMMIT',
      '\n',
      'é',
      '名',
      '🚀',
    ),
    fc.string({ minLength: 1, maxLength: 6 }),
  );
  const hostileName = fc
    .array(piece, { minLength: 1, maxLength: 8 })
    .map((parts) => parts.join('').replace(/\0/g, ''))
    .filter((n) => n.length > 0 && Buffer.byteLength(n) <= 63);

  it('every accepted statement runs as exactly what was checked, and every name stays one name', () => {
    fc.assert(
      fc.property(fc.constantFrom(...POSITIONS), fc.array(hostileName, { minLength: 1, maxLength: 3 }), ([, template], names) => {
        let i = 0;
        const used: string[] = [];
        const sql = template.replace(/\bN\b/g, () => {
          const n = names[i++ % names.length];
          used.push(n);
          return quoted(n);
        });
        const r = prepareAndInspect(
          sql,
          (template.match(/\?/g) ?? []).map(() => 1),
        );
        if (r.refused) return; // a refusal is fine; a mismatch or a crash is not (checked inside)
        for (const n of used) expect(r.names!.has(n)).toBe(true);
      }),
      { numRuns: 1500, seed: 8 },
    );
    expect(defects).toEqual([]);
  });
});

describe('SqlGuard: every construct it accepts prints back to itself', () => {
  beforeAll(async () => {
    await loadSqlParser();
  });

  // Legitimate statements a model writes, one construct or more each: none may end in rewrite_mismatch.
  it.each([
    'SELECT DISTINCT ON (customer_id) customer_id, id FROM orders ORDER BY customer_id, id DESC NULLS LAST',
    'SELECT status FROM orders GROUP BY DISTINCT status, ROLLUP (customer_id, (id, note)), CUBE (amount), GROUPING SETS ((status), ())',
    'SELECT id FROM orders ORDER BY amount FETCH FIRST ? ROWS WITH TIES',
    'SELECT id FROM orders ORDER BY amount OFFSET ? ROWS FETCH FIRST ? ROWS WITH TIES',
    'SELECT o.id FROM orders o NATURAL JOIN customers c',
    'SELECT o.id FROM orders o RIGHT JOIN customers c ON c.id = o.customer_id FULL JOIN currencies k ON TRUE',
    'SELECT * FROM orders o LEFT JOIN LATERAL (SELECT c.name FROM customers c WHERE c.id = o.customer_id) x ON TRUE',
    'SELECT * FROM orders a JOIN orders b USING (id, note) AS j',
    'SELECT sum(amount) OVER (ORDER BY id RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES) FROM orders',
    'SELECT sum(amount) OVER (PARTITION BY status ORDER BY id GROUPS BETWEEN ? PRECEDING AND ? FOLLOWING EXCLUDE CURRENT ROW) FROM orders',
    'SELECT sum(amount) OVER (ORDER BY id ROWS ? PRECEDING), count(*) OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE GROUP) FROM orders',
    'SELECT rank() OVER w, sum(amount) OVER (w ROWS UNBOUNDED PRECEDING) FROM orders WINDOW w AS (PARTITION BY status ORDER BY id)',
    'SELECT CASE status WHEN ? THEN ? ELSE ? END, CASE WHEN amount > ? THEN TRUE END FROM orders',
    'SELECT (id, note) = (?, ?), ROW(id) IS NULL, ARRAY[id, id], ARRAY[ARRAY[id]], ARRAY(SELECT id FROM customers) FROM orders',
    'SELECT - amount, NOT paid, amount * - ?, ? - - amount FROM orders',
    'SELECT id FROM orders WHERE amount BETWEEN SYMMETRIC ? AND ? AND id NOT BETWEEN ? AND ? AND note NOT LIKE ? AND note ILIKE ? AND note NOT ILIKE ?',
    'SELECT id FROM orders WHERE id IN (?, ?) AND id NOT IN (SELECT id FROM customers) AND id = ANY (?) AND id > ALL (SELECT id FROM customers)',
    'SELECT id FROM orders WHERE id = ANY (ARRAY[?, ?]) OR note IS DISTINCT FROM ? OR note IS NOT DISTINCT FROM ? OR paid IS NOT TRUE OR paid IS UNKNOWN',
    'SELECT NULLIF(note, ?), COALESCE(note, ?, ?), GREATEST(amount, ?), LEAST(amount, ?) FROM orders',
    'SELECT EXTRACT(year FROM created_at), EXTRACT(epoch FROM created_at), date_part(?, created_at) FROM orders',
    'SELECT POSITION(? IN note), SUBSTRING(note FROM ?), SUBSTRING(note FROM ? FOR ?), substr(note, ?, ?) FROM orders',
    'SELECT TRIM(note), TRIM(BOTH ? FROM note), TRIM(LEADING FROM note), TRIM(TRAILING ? FROM note) FROM orders',
    'SELECT created_at AT TIME ZONE ?, CURRENT_DATE, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(3), LOCALTIME(2), now() FROM orders',
    'SELECT ?::numeric(12,2), ?::varchar(5), CAST(? AS integer), ?::timestamp with time zone, ?::interval, ?::char, ?::double precision, NULL::text FROM orders',
    'SELECT count(DISTINCT status), string_agg(note, ? ORDER BY id DESC), percentile_disc(?) WITHIN GROUP (ORDER BY amount), count(*) FILTER (WHERE paid) FROM orders',
    'SELECT array_agg(id ORDER BY id) FILTER (WHERE amount > ?) OVER (PARTITION BY status) FROM orders',
    'WITH a AS MATERIALIZED (SELECT id FROM orders), b(x) AS NOT MATERIALIZED (SELECT id FROM a) SELECT x FROM b',
    '(SELECT id FROM orders ORDER BY id LIMIT ?) UNION (SELECT id FROM customers) INTERSECT ALL SELECT id FROM orders EXCEPT SELECT id FROM customers ORDER BY 1 LIMIT ? OFFSET ?',
    'SELECT o FROM orders o WHERE EXISTS (SELECT FROM customers c WHERE c.id = o.customer_id) AND NOT EXISTS (SELECT FROM currencies)',
    'SELECT FROM orders',
    'SELECT id FROM ONLY orders',
    'SELECT "Id" AS "Mixed Case", "select" FROM orders AS "From"',
    'SELECT U&"\\0069d" FROM orders',
    'SELECT id FROM orders LIMIT ALL',
    'SELECT id FROM orders LIMIT NULL OFFSET ?',
  ])('%s', (sql) => {
    const args = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 1);
    const r = prepareAndInspect(sql, args);
    if (r.refused) throw new Error(`refused as ${r.refused}: ${sql}`);
  });
});

// ---------------------------------------------------------------- what a name stands for

describe('SqlGuard: every name the statement uses is pg_catalog s', () => {
  beforeAll(async () => {
    await loadSqlParser();
  });
  afterEach(() => {
    expect(defects).toEqual([]);
  });

  /** Every FuncCall, operator and type of the text that runs, with its schema as written (none: ''). */
  function namesOf(text: string): { functions: string[]; operators: string[]; types: string[]; relations: string[] } {
    const out = { functions: [] as string[], operators: [] as string[], types: [] as string[], relations: [] as string[] };
    const parts = (list: unknown) => ((list as Array<{ String: { sval: string } }>) ?? []).map((p) => p.String.sval).join('.');
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) return v.forEach(walk);
      if (!v || typeof v !== 'object') return;
      const o = v as Record<string, Record<string, unknown>>;
      if (o.FuncCall) out.functions.push(parts(o.FuncCall.funcname));
      if (o.A_Expr && o.A_Expr.name) out.operators.push(`${o.A_Expr.kind}:${parts(o.A_Expr.name)}`);
      if (o.SubLink && o.SubLink.operName) out.operators.push(`sublink:${parts(o.SubLink.operName)}`);
      if (o.TypeName) out.types.push(parts(o.TypeName.names));
      if (o.TypeCast) out.types.push(parts((o.TypeCast.typeName as Record<string, unknown>).names));
      if (o.RangeVar) out.relations.push(`${o.RangeVar.schemaname ?? ''}.${o.RangeVar.relname}${o.RangeVar.inh ? '' : ' ONLY'}`);
      Object.values(o).forEach(walk);
    };
    walk(parseSync(text).stmts![0].stmt);
    return out;
  }

  it('prints functions, aggregates, window functions, operators and types qualified (attack: public.round(float8, int) SECURITY DEFINER)', () => {
    const p = strict.prepare({
      sql: `SELECT round(amount::float8, ?), count(*), row_number() OVER (ORDER BY id), -amount, note || ?, id::text
              FROM orders WHERE note LIKE ? AND note NOT ILIKE ? AND id = ANY(?::int[]) AND id IN (SELECT id FROM customers)
               AND id < ALL (SELECT id FROM customers) GROUP BY id, amount, note`,
      args: [2, 'x', 'a%', 'b%', [1], 1].slice(0, 5),
      tenantId: 'alpha',
    });
    const n = namesOf(p.text);
    expect(n.functions.length).toBeGreaterThanOrEqual(3);
    for (const f of n.functions) expect(f).toMatch(/^pg_catalog\./);
    expect(n.operators.length).toBeGreaterThanOrEqual(9);
    for (const o of n.operators) expect(o).toMatch(/:pg_catalog\./);
    // LIKE and ILIKE run as the operators they are, named.
    expect(n.operators).toEqual(expect.arrayContaining(['AEXPR_OP:pg_catalog.~~', 'AEXPR_OP:pg_catalog.!~~*', 'sublink:pg_catalog.=']));
    expect(n.types.length).toBeGreaterThanOrEqual(3);
    for (const t of n.types) expect(t).toMatch(/^pg_catalog\./);
    // Every table is named with its schema, so no search path and no CTE can stand in for it.
    for (const r of n.relations) expect(r).toMatch(/^public\./);
  });

  it('a CTE named like a registered table cannot capture the scoped subquery of the table (attack: WITH customers AS ...)', () => {
    const p = strict.prepare({
      sql: 'WITH customers AS (SELECT id, note AS name FROM orders) SELECT c.name FROM customers c, (SELECT * FROM customers) x',
      tenantId: 'alpha',
    });
    // The model's own references read its CTE; the rewrite's read public.orders, by schema.
    expect(namesOf(p.text).relations.sort()).toEqual(['.customers', '.customers', 'public.orders']);
  });

  it('FROM ONLY keeps its ONLY inside the scoped subquery (attack: read the rows of the tables that inherit from it)', () => {
    const only = namesOf(strict.prepare({ sql: 'SELECT id FROM ONLY orders', tenantId: 'alpha' }).text).relations;
    expect(only).toEqual(['public.orders ONLY']);
    expect(namesOf(strict.prepare({ sql: 'SELECT id FROM orders', tenantId: 'alpha' }).text).relations).toEqual(['public.orders']);
  });

  it.each([...ROW_FUNCTION_NAMES])('refuses o.%s: a qualified column named like a function calls it on the whole row', (name) => {
    expect(reason(() => strict.prepare({ sql: `SELECT o.${quoted(name)} FROM orders o`, tenantId: 'alpha' }))).toBe('column_not_allowed');
    expect(reason(() => strict.prepare({ sql: `SELECT public.orders.${quoted(name)} FROM orders`, tenantId: 'alpha' }))).toBe(
      'column_not_allowed',
    );
  });

  it('takes a qualified column named like a function when a registered table declares it, and any other qualified column', () => {
    const g = new SqlGuard([{ table: 'stats', tenantColumn: 'tenant_id', columns: ['id', 'count', 'rank'] }]);
    expect(reason(() => g.prepare({ sql: 'SELECT s.count, s.rank, s.id FROM stats s', tenantId: 'alpha' }))).toBe('accepted');
    expect(reason(() => g.prepare({ sql: 'SELECT s.pg_typeof FROM stats s', tenantId: 'alpha' }))).toBe('column_not_allowed');
    expect(reason(() => strict.prepare({ sql: 'SELECT o.amount, o.note FROM orders o', tenantId: 'alpha' }))).toBe('accepted');
  });

  it('substring takes positions only: substring(x FROM ?) and substring(x SIMILAR ? ESCAPE ?) run no regular expression', () => {
    for (const sql of [
      'SELECT substring(note FROM ?) FROM orders',
      'SELECT substring(note, ?) FROM orders',
      'SELECT substring(note SIMILAR ? ESCAPE ?) FROM orders',
      'SELECT substring(note FROM ? FOR ?) FROM orders',
      'SELECT substring(note FROM ?::int) FROM orders',
    ]) {
      const p = strict.prepare({ sql, args: (sql.match(/\?/g) ?? []).map(() => '1'), tenantId: 'alpha' });
      const tree = JSON.stringify(parseSync(p.text));
      const args = /"funcname":\[\{"String":\{"sval":"pg_catalog"\}\},\{"String":\{"sval":"substring"\}\}\],"args":(\[.*?\]),"func/.exec(
        tree,
      );
      expect(args).not.toBeNull();
      // Each argument after the string is cast to an integer.
      const casts = args![1].match(/"TypeCast"/g) ?? [];
      expect(casts.length).toBe((sql.match(/\?/g) ?? []).length);
      expect(args![1]).toContain('"int4"');
    }
    expect(reason(() => strict.prepare({ sql: 'SELECT id FROM orders WHERE note SIMILAR TO ?', args: ['%'], tenantId: 'alpha' }))).toBe(
      'operator_not_allowed',
    );
  });

  it('refuses syntax newer than the connected server with what to write instead (attack: AT LOCAL on PostgreSQL 15)', () => {
    const on = (version: number | undefined) => new SqlGuard(TABLES, { serverVersion: version });
    const sql = 'SELECT created_at AT LOCAL FROM orders';
    let refusal: unknown;
    try {
      on(150004).prepare({ sql, tenantId: 'alpha' });
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(SqlRefusal);
    expect((refusal as SqlRefusal).reason).toBe('unsupported_syntax');
    expect((refusal as SqlRefusal).message).toMatch(
      /AT LOCAL needs PostgreSQL 17 or later, and this database runs PostgreSQL 15\.4: write AT TIME ZONE/,
    );
    expect(reason(() => on(170005).prepare({ sql, tenantId: 'alpha' }))).toBe('accepted');
    expect(reason(() => on(undefined).prepare({ sql, tenantId: 'alpha' }))).toBe('accepted');
    expect(
      reason(() =>
        on(130010).prepare({
          sql: 'SELECT date_bin(?::interval, created_at, ?::timestamptz) FROM orders',
          args: ['1 day', '2026-01-01'],
          tenantId: 'alpha',
        }),
      ),
    ).toBe('unsupported_syntax');
    expect(reason(() => on(130010).prepare({ sql: 'SELECT count(*) FROM orders GROUP BY DISTINCT id', tenantId: 'alpha' }))).toBe(
      'unsupported_syntax',
    );
    // A version learned later applies to statements planned before it (the plan cache is dropped).
    const g = on(undefined);
    expect(reason(() => g.prepare({ sql, tenantId: 'alpha' }))).toBe('accepted');
    g.useServerVersion(150004);
    expect(reason(() => g.prepare({ sql, tenantId: 'alpha' }))).toBe('unsupported_syntax');
  });

  it('reads json: ->, ->>, #>, #>>, @>, <@ and the json functions, bound like everything else', () => {
    for (const sql of [
      'SELECT note::jsonb -> ?, note::jsonb ->> ?, note::jsonb #> ?::text[], note::jsonb #>> ?::text[] FROM orders',
      'SELECT id FROM orders WHERE note::jsonb @> ?::jsonb AND ?::jsonb <@ note::jsonb',
      'SELECT jsonb_array_length(note::jsonb), jsonb_typeof(note::jsonb), jsonb_extract_path_text(note::jsonb, ?) FROM orders',
      'SELECT jsonb_array_elements(note::jsonb) FROM orders',
      'SELECT o.id, line.value ->> ? FROM orders o, jsonb_array_elements(o.note::jsonb) AS line',
      'SELECT o.id, e.key, e.value FROM orders o CROSS JOIN LATERAL jsonb_each_text(o.note::jsonb) WITH ORDINALITY AS e(key, value, n)',
      'SELECT k FROM orders o, jsonb_object_keys(o.note::jsonb) AS k',
    ]) {
      const r = prepareAndInspect(
        sql,
        (sql.match(/\?/g) ?? []).map(() => 'a'),
      );
      expect([sql, r.refused]).toEqual([sql, null]);
      if (sql.includes('@>')) expect(r.prepared!.text).toContain('"pg_catalog"."pg_column_size"(');
    }
    for (const [sql, why] of [
      ['SELECT g FROM orders, generate_series(?::int, ?::int) AS g', 'function_in_from'],
      ['SELECT x FROM orders, unnest(?::int[]) AS x', 'function_in_from'],
      ['SELECT x FROM orders o, ROWS FROM (jsonb_array_elements(o.note::jsonb)) AS x', 'function_in_from'],
      ['SELECT jsonb_path_exists(note::jsonb, ?::jsonpath) FROM orders', 'function_not_allowed'],
      ['SELECT id FROM orders WHERE note::jsonb @@ ?', 'operator_not_allowed'],
      ['SELECT jsonb_path_query(note::jsonb, ?) FROM orders', 'function_not_allowed'],
      // Containment is bounded by the sizes of its two sides: each side is one value, typed, holding no other containment.
      ['SELECT id FROM orders WHERE note::jsonb @> ?', 'bad_placeholder'],
      ['SELECT id FROM orders WHERE note::jsonb @> ANY (?::jsonb[])', 'operator_not_allowed'],
      ['SELECT id FROM orders WHERE note::jsonb <@ ALL (SELECT o.note::jsonb FROM orders o)', 'operator_not_allowed'],
      ['SELECT id FROM orders WHERE to_jsonb(note::jsonb @> ?::jsonb) <@ ?::jsonb', 'operator_not_allowed'],
    ] as const)
      expect([
        sql,
        prepareAndInspect(
          sql,
          (sql.match(/\?/g) ?? []).map(() => 'a'),
        ).refused,
      ]).toEqual([sql, why]);
  });
});
