import { fenceTablesFor, installTenantFence } from '@zmodu/data';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { SAMPLE_DATA_ENTITIES } from '../trading/data-entities';

/**
 * db.query's second fence brought to its current version on a database that has an older one (the install is
 * idempotent: on a new database it finds everything in place). Version 2 made its policies under a pinned search_path
 * and took EXECUTE on functions outside pg_catalog, advisory locks and setseed from the reader. `down` leaves the fence:
 * SampleFence1764470000000's `down` removes it.
 */
export class SampleFenceUpgrade1764900000000 implements MigrationInterface {
  name = 'SampleFenceUpgrade1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await installTenantFence(q, fenceTablesFor({ entities: SAMPLE_DATA_ENTITIES }));
  }

  async down(): Promise<void> {
    // Nothing to undo: an older fence's policies are not worth restoring.
  }
}
