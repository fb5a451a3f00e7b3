import { MigrationInterface, QueryRunner } from 'typeorm';

/** A run's proposals by run id: a run started again after its process died finds what it already proposed. */
export class ZmoduPipelineRunIndex1764600000000 implements MigrationInterface {
  name = 'ZmoduPipelineRunIndex1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_proposals_run_idx ON zmodu_proposals (tenant_id, run_id) WHERE run_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS zmodu_proposals_run_idx`);
  }
}
