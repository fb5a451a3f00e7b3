import { bindPlaceholders } from './placeholders';
import { loadSqlParser } from './pg-parser';
import { SqlGuard } from './sql-guard';
import { SqlRefusal } from './sql-refusal';

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
    expect(bindPlaceholders('SELECT * FROM "a?b" WHERE x = ? AND y = ?')).toEqual({ text: 'SELECT * FROM "a?b" WHERE x = $1 AND y = $2', count: 2 });
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
    const p = guard.prepare({ sql: 'SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.amount > ?', args: [5], tenantId: 't1' });
    expect(p.values).toEqual([5, 't1']);
    expect(p.tables).toEqual(['customers', 'orders']);
    const text = p.text.replace(/\s+/g, ' ');
    expect(text).toContain('( SELECT * FROM orders WHERE tenant_id = $2 OFFSET 0 ) AS o');
    expect(text).toContain('( SELECT id, name FROM customers WHERE tenant_id = $2 OFFSET 0 ) AS c');
  });

  it('reads a shared table unfiltered and refuses one whose tenant column is unknown', () => {
    expect(guard.prepare({ sql: 'SELECT * FROM currencies', tenantId: 't1' }).values).toEqual([]);
    expect(reason(() => guard.prepare({ sql: 'SELECT * FROM legacy', tenantId: 't1' }))).toBe('TenantScopeUnavailable');
  });

  it('allows NULL, booleans and positional GROUP BY / ORDER BY, and nothing else literal', () => {
    expect(reason(() => guard.prepare({ sql: 'SELECT id FROM orders WHERE paid = true AND note IS NOT NULL GROUP BY 1 ORDER BY 1', tenantId: 't' }))).toBe('accepted');
    expect(reason(() => guard.prepare({ sql: 'SELECT id + 1 FROM orders', tenantId: 't' }))).toBe('literal_not_allowed');
    expect(reason(() => guard.prepare({ sql: 'SELECT id FROM orders LIMIT 3', tenantId: 't' }))).toBe('literal_not_allowed');
  });

  it('checks the arguments', () => {
    expect(reason(() => guard.prepare({ sql: 'SELECT ?', args: 'x', tenantId: 't' }))).toBe('bad_request');
    expect(reason(() => guard.prepare({ sql: 'SELECT ?', args: [{ a: 1 }], tenantId: 't' }))).toBe('bad_request');
    expect(reason(() => guard.prepare({ sql: 'SELECT ?', args: [], tenantId: 't' }))).toBe('arg_count');
    expect(reason(() => guard.prepare({ sql: '', tenantId: 't' }))).toBe('bad_request');
    expect(reason(() => guard.prepare({ sql: `SELECT ${'x, '.repeat(5000)}x`, tenantId: 't' }))).toBe('too_long');
  });

  it('reports a syntax error with the parser message', () => {
    expect(reason(() => guard.prepare({ sql: 'SELEC * FROM orders', tenantId: 't' }))).toBe('syntax_error');
  });
});
