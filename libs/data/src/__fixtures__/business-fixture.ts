import { DataSource } from 'typeorm';
import type { EntitySpec, ReportSpec } from '@zmodu/data';
import type { FenceTable } from '@zmodu/data/internal';
import type { KpiMetric } from '@zmodu/data/internal';

/**
 * Two tenants' data for the data-skill suites. Everything of tenant `beta` is recognizable:
 * ids from 100000, amounts from 50000, and text starting with BETA, so a leak shows in the rows.
 * An unregistered table `secrets` holds what no query may ever reach.
 */
export const ALPHA = 'alpha';
export const BETA = 'beta';

export const ENTITIES: EntitySpec[] = [
  { name: 'order', table: 'orders', pk: 'id', tenantColumn: 'tenant_id' },
  { name: 'customer', table: 'customers', pk: 'id', tenantColumn: 'tenant_id', columns: ['id', 'tenant_id', 'name', 'region', 'tier'] },
  { name: 'order_line', table: 'order_lines', pk: 'id' },
  { name: 'currency', table: 'currencies', pk: 'code', tenantColumn: null },
];

/** The entities as fence tables (order_lines takes the default tenant column). */
export const FENCE_TABLES: FenceTable[] = ENTITIES.map((e) => ({
  table: e.table,
  tenantColumn: e.tenantColumn === undefined ? 'tenant_id' : e.tenantColumn,
  columns: e.columns,
}));

export const KPIS: KpiMetric[] = [
  {
    name: 'open_orders',
    description: 'orders not yet shipped',
    tenantSql: "SELECT count(*) FROM orders WHERE tenant_id = ? AND status = 'open'",
  },
  { name: 'global_orders', description: 'all orders (system only)', sql: 'SELECT count(*) FROM orders' },
];

export const REPORTS: ReportSpec[] = [
  {
    name: 'revenue_by_region',
    description: 'revenue per customer region',
    tenantSql:
      'SELECT c.region, count(*) AS orders, sum(o.amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id AND c.tenant_id = o.tenant_id WHERE o.tenant_id = $1 GROUP BY c.region ORDER BY c.region',
  },
];

export const SCHEMA = `
CREATE TABLE customers (id integer PRIMARY KEY, tenant_id text NOT NULL, name text NOT NULL, region text NOT NULL, tier text NOT NULL, email text NOT NULL);
CREATE TABLE orders (id integer PRIMARY KEY, tenant_id text NOT NULL, customer_id integer NOT NULL, status text NOT NULL, amount numeric(12,2) NOT NULL, created_at timestamptz NOT NULL, note text NOT NULL);
CREATE INDEX orders_tenant_idx ON orders (tenant_id);
CREATE INDEX customers_tenant_idx ON customers (tenant_id);
CREATE TABLE order_lines (id integer PRIMARY KEY, tenant_id text NOT NULL, order_id integer NOT NULL, sku text NOT NULL, qty integer NOT NULL, price numeric(12,2) NOT NULL);
CREATE INDEX order_lines_tenant_idx ON order_lines (tenant_id);
CREATE TABLE currencies (code text PRIMARY KEY, name text NOT NULL);
CREATE TABLE secrets (id integer PRIMARY KEY, tenant_id text NOT NULL, value text NOT NULL);
`;

const REGIONS = ['north', 'south', 'east', 'west'];
const STATUSES = ['open', 'shipped', 'cancelled'];

/** Create the tables and fill them: `perTenant` orders per tenant (customers a tenth of that, two lines per order). */
export async function seedBusinessData(ds: DataSource, perTenant = 60): Promise<void> {
  for (const stmt of SCHEMA.split(';')
    .map((s) => s.trim())
    .filter(Boolean))
    await ds.query(stmt);
  await ds.query(`INSERT INTO currencies VALUES ('USD', 'US dollar'), ('EUR', 'Euro')`);
  const customers = Math.max(3, Math.floor(perTenant / 10));
  for (const [tenant, base, money, label] of [
    [ALPHA, 1, 10, 'alpha'],
    [BETA, 100000, 50000, 'BETA'],
  ] as const) {
    const cust: unknown[][] = [];
    for (let i = 0; i < customers; i++)
      cust.push([
        base + i,
        tenant,
        `${label} customer ${i}`,
        REGIONS[i % REGIONS.length],
        i % 3 === 0 ? 'gold' : 'standard',
        `${label}-${i}@example.com`,
      ]);
    await insert(ds, 'customers', ['id', 'tenant_id', 'name', 'region', 'tier', 'email'], cust);
    const orders: unknown[][] = [];
    const lines: unknown[][] = [];
    for (let i = 0; i < perTenant; i++) {
      const id = base + i;
      const day = new Date(Date.UTC(2026, i % 12, 1 + (i % 27)));
      orders.push([id, tenant, base + (i % customers), STATUSES[i % 3], money + ((i * 37) % 900) + 0.5, day, `${label} note ${i}`]);
      lines.push([base * 10 + i * 2, tenant, id, `${label}-SKU-${i % 7}`, 1 + (i % 5), money / 10 + (i % 9)]);
      lines.push([base * 10 + i * 2 + 1, tenant, id, `${label}-SKU-${(i + 3) % 7}`, 2, money / 10 + 1]);
    }
    await insert(ds, 'orders', ['id', 'tenant_id', 'customer_id', 'status', 'amount', 'created_at', 'note'], orders);
    await insert(ds, 'order_lines', ['id', 'tenant_id', 'order_id', 'sku', 'qty', 'price'], lines);
    await ds.query(`INSERT INTO secrets VALUES ($1, $2, $3)`, [base, tenant, `${label} secret`]);
  }
}

async function insert(ds: DataSource, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  for (let start = 0; start < rows.length; start += 200) {
    const chunk = rows.slice(start, start + 200);
    const values: unknown[] = [];
    const tuples = chunk.map((row) => `(${row.map((v) => (values.push(v), `$${values.length}`)).join(', ')})`);
    await ds.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, values);
  }
}

/** A fingerprint of every table, to show that nothing changed. */
export async function fingerprint(ds: DataSource): Promise<string> {
  const rows = await ds.query(
    `SELECT (SELECT count(*) || ':' || coalesce(sum(amount), 0) FROM orders) AS o,
            (SELECT count(*) || ':' || coalesce(sum(qty), 0) FROM order_lines) AS l,
            (SELECT count(*) FROM customers) AS c, (SELECT count(*) FROM secrets) AS s, (SELECT count(*) FROM currencies) AS k`,
  );
  return JSON.stringify(rows[0]);
}

/** True when a result shows anything of tenant beta. */
export function leaksBeta(value: unknown): boolean {
  const text = JSON.stringify(value);
  if (/BETA|beta/.test(text)) return true;
  let leaked = false;
  JSON.parse(text, (_k, v) => {
    if (typeof v === 'number' && v >= 50000) leaked = true;
    if (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) && Number(v) >= 50000) leaked = true;
    return v;
  });
  return leaked;
}
