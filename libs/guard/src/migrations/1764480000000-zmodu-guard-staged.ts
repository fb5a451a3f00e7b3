import { MigrationInterface, QueryRunner } from 'typeorm';

/** Audit entries of staged executions name the proposal and its approvers. */
export class ZmoduGuardStaged1764480000000 implements MigrationInterface {
  name = 'ZmoduGuardStaged1764480000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_audit_log ADD COLUMN IF NOT EXISTS proposal_id text, ADD COLUMN IF NOT EXISTS approvers jsonb`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_audit_log_proposal_idx ON zmodu_audit_log (proposal_id) WHERE proposal_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS zmodu_audit_log_proposal_idx`);
    await q.query(`ALTER TABLE zmodu_audit_log DROP COLUMN IF EXISTS approvers, DROP COLUMN IF EXISTS proposal_id`);
  }
}
