/** Identifiers an adversarial model writes, and the places in a SELECT where it writes them (db.query suites). */

/** Hostile identifiers: quotes, parentheses, semicolons, comments, keywords, placeholders, unicode. */
export const HOSTILE_NAMES: string[] = [
  '() n,(SELECT string_agg(name,$$,$$) FROM public.customers) x',
  'x"; DELETE FROM orders; --',
  'a) UNION ALL SELECT * FROM secrets --',
  '/* c */ x',
  '-- comment',
  'x;COMMIT;UPDATE orders SET amount = 0',
  'select',
  'FROM',
  '$1',
  '?',
  "it's",
  'back\\slash',
  ')) AS q, pg_roles r --',
  'w AS (PARTITION BY (SELECT 1))',
  '""',
  'line\nbreak',
  'Ünïcødé 名前 🚀',
  'ORDER BY (SELECT version())',
];

/** One template per identifier position; N is replaced by the quoted hostile name. */
export const POSITIONS: Array<[string, string]> = [
  ['table alias', 'SELECT N.id FROM orders AS N'],
  ['column alias', 'SELECT id AS N FROM orders ORDER BY N'],
  ['CTE name', 'WITH N AS (SELECT id FROM orders) SELECT * FROM N'],
  ['CTE column list', 'WITH c(N) AS (SELECT id FROM orders) SELECT N FROM c'],
  ['WINDOW name and OVER name', 'SELECT count(*) OVER N FROM orders WINDOW N AS (ORDER BY id)'],
  ['OVER name with no WINDOW', 'SELECT count(*) OVER N FROM orders'],
  ['window reference in OVER (...)', 'SELECT rank() OVER (N ORDER BY id) FROM orders WINDOW N AS (PARTITION BY status)'],
  ['window built on a window', 'SELECT rank() OVER b FROM orders WINDOW N AS (PARTITION BY status), b AS (N ORDER BY id)'],
  ['JOIN USING alias', 'SELECT N.id FROM orders JOIN order_lines USING (id) AS N'],
  ['parenthesized join alias', 'SELECT * FROM (orders o JOIN customers c ON TRUE) AS N'],
  ['join alias columns', 'SELECT * FROM (orders o CROSS JOIN currencies k) AS j(N)'],
  ['subquery alias', 'SELECT N.id FROM (SELECT id FROM orders) AS N'],
  ['subquery alias columns', 'SELECT * FROM (SELECT id FROM orders) AS s(N)'],
  ['table alias columns', 'SELECT * FROM orders AS o(N)'],
  ['column', 'SELECT N FROM orders'],
  ['qualified column', 'SELECT o.N FROM orders o'],
  ['USING column', 'SELECT * FROM orders JOIN order_lines USING (N)'],
  ['whole-row reference', 'SELECT N FROM orders AS N'],
  ['GROUP BY and HAVING', 'SELECT N, count(*) FROM orders GROUP BY N HAVING count(N) > ?'],
  ['lateral alias', 'SELECT * FROM orders o, LATERAL (SELECT o.id) AS N'],
  ['union branch alias', 'SELECT id AS N FROM orders UNION SELECT id FROM customers'],
];
