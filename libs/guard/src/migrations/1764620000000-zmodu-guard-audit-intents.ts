import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 16: the audit entry of a staged execution is written in the execution's own transaction (an intent), so it
 * commits with the effect or not at all; the audit writer chains committed intents into zmodu_audit_log and deletes
 * them in one transaction. A process killed between the commit and the next batch loses nothing.
 */
export class ZmoduGuardAuditIntents1764620000000 implements MigrationInterface {
  name = 'ZmoduGuardAuditIntents1764620000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_audit_intents (
      id bigserial PRIMARY KEY,
      entry text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_audit_intents`);
  }
}
