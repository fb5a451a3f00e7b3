import { fenceTablesFor, tenantFenceMigration } from '@zmodu/data';
import { SAMPLE_DATA_ENTITIES } from '../trading/data-entities';

/**
 * db.query's second fence over the sample tables: a reader role (zmodu_reader) that may only
 * SELECT them, and row-level security that shows it only the caller's desk. Installed like any
 * migration; `down` removes it.
 */
export const SampleFence1764470000000 = tenantFenceMigration(
  'SampleFence1764470000000',
  fenceTablesFor({ entities: SAMPLE_DATA_ENTITIES }),
);
