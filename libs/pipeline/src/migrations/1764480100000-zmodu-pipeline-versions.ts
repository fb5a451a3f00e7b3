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
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_approval_decisions DROP COLUMN IF EXISTS edit, DROP COLUMN IF EXISTS version`);
    await q.query(`ALTER TABLE zmodu_proposals DROP COLUMN IF EXISTS agent, DROP COLUMN IF EXISTS permissions, DROP COLUMN IF EXISTS version`);
  }
}
