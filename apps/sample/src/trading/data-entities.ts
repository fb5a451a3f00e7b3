import type { EntitySpec } from '@zmodu/data';

/** The sample tables the data skills read (db.query, entity.lookup, entity.list), scoped to the caller's desk. */
export const SAMPLE_DATA_ENTITIES: EntitySpec[] = [
  { name: 'order', table: 'sample_orders', pk: 'id', tenantColumn: 'tenant_id' },
  { name: 'instrument', table: 'sample_instruments', pk: 'id', tenantColumn: 'tenant_id' },
];
