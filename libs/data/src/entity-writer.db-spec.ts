import { Guard } from '@zmodu/guard';
import { ALPHA, BETA, ENTITIES } from './__fixtures__/business-fixture';
import { BusinessApp, startBusinessApp } from './__fixtures__/business-app';
import { createSkillContext } from '@zmodu/skills';
import { SkillDispatcher } from '@zmodu/skills';
import { EntitySpec } from './data-skills.options';

const WRITE_ENTITIES: EntitySpec[] = ENTITIES.map((e) =>
  e.name === 'order'
    ? { ...e, writable: ['customer_id', 'status', 'amount', 'created_at', 'note'], references: { customer_id: 'customer' } }
    : e.name === 'customer'
      ? { ...e, writable: ['name', 'region', 'tier', 'email'] }
      : e,
);

describe('entity.create and entity.update', () => {
  let t: BusinessApp;
  const write = (skill: string, args: unknown, tenantId = ALPHA, permissions = ['entity:write']) =>
    t.app.get(SkillDispatcher).dispatch(
      createSkillContext({
        guard: new Guard({ allow: ['entity.create', 'entity.update'], allowExecute: true }),
        tenantId,
        userId: 'ops',
        permissions,
      }),
      skill,
      args,
    );
  const order = (over: Record<string, unknown> = {}) => ({
    customer_id: 1,
    status: 'open',
    amount: 12.5,
    created_at: '2026-11-30T00:00:00Z',
    note: 'made by the model',
    ...over,
  });

  beforeAll(async () => {
    t = await startBusinessApp(
      { entities: WRITE_ENTITIES, skills: ['db.query', 'entity.lookup', 'entity.list', 'entity.create', 'entity.update'] },
      10,
    );
    await t.ds.query('CREATE SEQUENCE orders_id_seq START 500000');
    await t.ds.query(`ALTER TABLE orders ALTER COLUMN id SET DEFAULT nextval('orders_id_seq')`);
    await t.ds.query('CREATE SEQUENCE customers_id_seq START 500000');
    await t.ds.query(`ALTER TABLE customers ALTER COLUMN id SET DEFAULT nextval('customers_id_seq')`);
    await t.ds.query('CREATE UNIQUE INDEX customers_tenant_email ON customers (tenant_id, email)');
    await t.ds.query('ALTER TABLE orders ADD CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id)');
  });

  afterAll(async () => {
    await t?.close();
  });

  it('creates a record with the tenant column forced from the context', async () => {
    const r = await write('entity.create', { entity: 'order', values: order() });
    expect(r.value).toMatchObject({ created: true, record: { tenant_id: ALPHA, status: 'open', note: 'made by the model' } });
  });

  it('refuses a model-supplied tenant column, a primary key and unknown or unwritable columns, by name', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [order({ tenant_id: BETA }), 'tenant_column_not_allowed', /tenant column tenant_id is set from your context/],
      [order({ id: 7 }), 'primary_key_not_allowed', /primary key id/],
      [order({ colour: 'red' }), 'column_not_writable', /Column colour is not writable on order/],
    ];
    for (const [values, reason, message] of cases) {
      const r = await write('entity.create', { entity: 'order', values });
      expect(r.error).toMatchObject({ error: 'QueryRefused', reason });
      expect(String(r.error?.message)).toMatch(message);
    }
    const readOnly = await write('entity.create', { entity: 'currency', values: { name: 'x' } });
    expect(readOnly.error).toMatchObject({ error: 'InvalidArguments' }); // not in the enum of writable entities
  });

  it('checks values against the column types before writing', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [order({ amount: 'lots' }), /amount: must be a number/],
      [order({ customer_id: 1.5 }), /customer_id: must be a whole number/],
      [order({ created_at: 'yesterday' }), /created_at: must be an ISO 8601/],
      [order({ status: null }), /status: may not be null/],
      [order({ note: 42 }), /note: must be a string/],
    ];
    for (const [values, message] of cases) {
      const r = await write('entity.create', { entity: 'order', values });
      expect(r.error).toMatchObject({ reason: 'invalid_value' });
      expect(String(r.error?.message)).toMatch(message);
    }
  });

  it('a reference must point at a record of the caller tenant; the answer is neutral', async () => {
    const other = await write('entity.create', { entity: 'order', values: order({ customer_id: 100000 }) });
    const missing = await write('entity.create', { entity: 'order', values: order({ customer_id: 999999 }) });
    expect(other.error).toMatchObject({ error: 'QueryRefused', reason: 'write_refused' });
    expect(missing.error).toEqual(other.error);
  });

  it('a unique violation is neutral too (no existence oracle)', async () => {
    const first = await write('entity.create', {
      entity: 'customer',
      values: { name: 'New', region: 'north', tier: 'gold', email: 'dup@example.com' },
    });
    expect(first.ok).toBe(true);
    const dup = await write('entity.create', {
      entity: 'customer',
      values: { name: 'New', region: 'north', tier: 'gold', email: 'dup@example.com' },
    });
    expect(dup.error).toMatchObject({ reason: 'write_refused' });
    expect(JSON.stringify(dup.error)).not.toMatch(/dup@example|customers_tenant_email|duplicate/);
  });

  it('updates a record of the caller; another tenant record is simply not found', async () => {
    const mine = await write('entity.update', { entity: 'order', id: 1, values: { status: 'shipped' } });
    expect(mine.value).toMatchObject({ updated: true, record: { id: 1, status: 'shipped', tenant_id: ALPHA } });
    const theirs = await write('entity.update', { entity: 'order', id: 100000, values: { status: 'cancelled' } });
    const none = await write('entity.update', { entity: 'order', id: 999999, values: { status: 'cancelled' } });
    expect(theirs.value).toEqual({ entity: 'order', updated: false, found: false, record: null });
    expect(none.value).toEqual(theirs.value);
    expect((await t.ds.query('SELECT status FROM orders WHERE id = 100000'))[0].status).not.toBe('cancelled');
    const moveTenant = await write('entity.update', { entity: 'order', id: 1, values: { tenant_id: BETA } });
    expect(moveTenant.error).toMatchObject({ reason: 'tenant_column_not_allowed' });
  });

  it('needs entity:write and the execute class', async () => {
    const noPerm = await write('entity.create', { entity: 'order', values: order() }, ALPHA, []);
    expect(noPerm.error).toMatchObject({ error: 'PermissionDenied', permission: 'entity:write' });
    const readOnlyPolicy = await t.app.get(SkillDispatcher).dispatch(
      createSkillContext({
        guard: new Guard({ allow: ['entity.create'], allowExecute: false }),
        tenantId: ALPHA,
        userId: 'ops',
        permissions: ['entity:write'],
      }),
      'entity.create',
      { entity: 'order', values: order() },
    );
    expect(readOnlyPolicy.error).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
  });
});
