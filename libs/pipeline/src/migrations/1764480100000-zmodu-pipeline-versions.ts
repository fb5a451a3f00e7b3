import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Proposals carry a version (a decision binds to it), the proposer's permissions (the staged skill
 * runs with them) and the proposing agent; a decision records the version it was made on and an
 * approver's edit.
 */
export class ZmoduPipelineVersions1764480100000 implements MigrationInterface {
  name = 'ZmoduPipelineVersions1764480100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_proposals
      ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1,
      ADD COLUMN IF NOT EXISTS permissions jsonb NOT NULL DEFAULT '[]',
      ADD COLUMN IF NOT EXISTS agent text`);
    await q.query(`ALTER TABLE zmodu_approval_decisions
      ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 0,
      ADD COLUMN IF NOT EXISTS edit jsonb`);
    // A decision is one per version now (an edit restarts the chain, so a step index can be decided
    // again, by someone else); decisions made before this migration were at version step + 1.
    await q.query(`UPDATE zmodu_approval_decisions SET version = step + 1 WHERE version = 0`);
    await q.query(`ALTER TABLE zmodu_approval_decisions DROP CONSTRAINT IF EXISTS zmodu_approval_decisions_step`);
    await q.query(`CREATE UNIQUE INDEX IF NOT EXISTS zmodu_approval_decisions_version ON zmodu_approval_decisions (proposal_id, version)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS zmodu_approval_decisions_version`);
    await q.query(`ALTER TABLE zmodu_approval_decisions DROP COLUMN IF EXISTS edit, DROP COLUMN IF EXISTS version`);
    await q.query(`ALTER TABLE zmodu_approval_decisions ADD CONSTRAINT zmodu_approval_decisions_step UNIQUE (proposal_id, step)`);
    await q.query(
      `ALTER TABLE zmodu_proposals DROP COLUMN IF EXISTS agent, DROP COLUMN IF EXISTS permissions, DROP COLUMN IF EXISTS version`,
    );
  }
}
