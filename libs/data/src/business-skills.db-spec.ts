import { ALPHA, BETA, fingerprint, leaksBeta } from './__fixtures__/business-fixture';
import { BusinessApp, startBusinessApp } from './__fixtures__/business-app';

describe('entity, kpi and report skills', () => {
  let t: BusinessApp;
  let before: string;

  beforeAll(async () => {
    t = await startBusinessApp();
    before = await fingerprint(t.ds);
  });

  afterAll(async () => {
    await t?.close();
  });

  afterEach(async () => {
    expect(await fingerprint(t.ds)).toBe(before);
  });

  describe('entity.lookup', () => {
    it('finds a record of the caller by primary key', async () => {
      const r = await t.call('entity.lookup', { entity: 'order', id: 1 });
      expect(r.value).toMatchObject({ entity: 'order', found: true, record: { id: 1, tenant_id: ALPHA } });
    });

    it('does not find another tenant record (same answer as a missing id: no existence oracle)', async () => {
      const other = await t.call('entity.lookup', { entity: 'order', id: 100000 });
      const missing = await t.call('entity.lookup', { entity: 'order', id: 999999 });
      expect(other.value).toEqual({ entity: 'order', found: false, record: null });
      expect(missing.value).toEqual(other.value);
    });

    it('shows only the declared columns', async () => {
      const r = await t.call('entity.lookup', { entity: 'customer', id: 1 });
      expect(Object.keys((r.value as { record: object }).record).sort()).toEqual(['id', 'name', 'region', 'tenant_id', 'tier']);
    });

    it('refuses an unknown entity, naming the known ones', async () => {
      const r = await t.call('entity.lookup', { entity: 'secret', id: 1 });
      expect(r.error).toMatchObject({ error: 'InvalidArguments' });
      const direct = await t.call('entity.list', { entity: 'order', filters: { email: 'x' } });
      expect(direct.error).toMatchObject({ error: 'QueryRefused', reason: 'filter_not_allowed' });
    });
  });

  describe('entity.list', () => {
    it('filters by equality on declared columns, capped, only the caller rows', async () => {
      const r = await t.call('entity.list', { entity: 'customer', filters: { region: 'north' }, limit: 100 });
      const rows = (r.value as { rows: Array<{ region: string; tenant_id: string }> }).rows;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((row) => row.region === 'north' && row.tenant_id === ALPHA)).toBe(true);
      expect(leaksBeta(rows)).toBe(false);
    });

    it('caps rows at the default of 20 and says it cut', async () => {
      const r = await t.call('entity.list', { entity: 'order' });
      expect(r.value).toMatchObject({ rowCount: 20, truncated: true });
    });

    it('refuses a filter on the tenant column or an undeclared column', async () => {
      for (const filters of [{ tenant_id: BETA }, { email: 'a' }]) {
        const r = await t.call('entity.list', { entity: 'customer', filters });
        expect(r.error).toMatchObject({ error: 'QueryRefused', reason: 'filter_not_allowed' });
      }
    });

    it('refuses a call without a tenant (fail closed)', async () => {
      const r = await t.call('entity.list', { entity: 'order' }, null);
      expect(r.error).toEqual({ error: 'TenantRequired', reason: 'tenant_scope_unavailable' });
    });
  });

  describe('kpi.query', () => {
    it('runs the metric tenantSql for a tenant-scoped call', async () => {
      const r = await t.call('kpi.query', { metric: 'open_orders' });
      const [ref] = await t.ds.query(`SELECT count(*) AS n FROM orders WHERE tenant_id = $1 AND status = 'open'`, [ALPHA]);
      expect(r.value).toEqual({ metric: 'open_orders', value: ref.n });
    });

    it('refuses a metric without a tenant query for a tenant, rather than an unfiltered value', async () => {
      const r = await t.call('kpi.query', { metric: 'global_orders' });
      expect(r.error).toMatchObject({ error: 'TenantScopeUnavailable' });
    });

    it('runs the global query only for a call without a tenant', async () => {
      const r = await t.call('kpi.query', { metric: 'global_orders' }, null);
      expect(r.value).toMatchObject({ metric: 'global_orders', value: '120' });
    });
  });

  describe('report.generate', () => {
    it('returns JSON rows of the caller only', async () => {
      const r = await t.call('report.generate', { report: 'revenue_by_region', format: 'json' });
      const v = r.value as { rows: Array<{ region: string; orders: string; revenue: string }>; columns: string[] };
      expect(v.columns).toEqual(['region', 'orders', 'revenue']);
      const total = v.rows.reduce((n, row) => n + Number(row.orders), 0);
      expect(total).toBe(60);
    });

    it('returns RFC 4180 CSV', async () => {
      const r = await t.call('report.generate', { report: 'revenue_by_region', format: 'csv' });
      const csv = (r.value as { csv: string }).csv;
      expect(csv.startsWith('"region","orders","revenue"\r\n')).toBe(true);
      expect(csv.endsWith('\r\n')).toBe(true);
      expect(csv.split('\r\n').filter(Boolean).length).toBe(5);
    });
  });

  it('a table without a tenant column fails closed with TenantScopeUnavailable when no default is configured', async () => {
    const strict = await startBusinessApp({ dbQueryTenantColumn: undefined }, 5);
    try {
      const q = await strict.call('db.query', { sql: 'SELECT count(*) FROM order_lines' });
      expect(q.error).toMatchObject({ error: 'TenantScopeUnavailable', reason: 'TenantScopeUnavailable' });
      const l = await strict.call('entity.list', { entity: 'order_line' });
      expect(l.error).toMatchObject({ error: 'TenantScopeUnavailable' });
      const ok = await strict.call('db.query', { sql: 'SELECT count(*) AS n FROM orders' });
      expect(ok.value).toMatchObject({ rows: [{ n: '5' }] });
    } finally {
      await strict.close();
    }
  });
});
