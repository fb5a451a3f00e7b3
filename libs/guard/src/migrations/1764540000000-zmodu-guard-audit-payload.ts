import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 14: the audit keeps each call's arguments and result (redacted, as canonical JSON text, capped; see
 * auditPayloadText), hashed into the chain. Text rather than jsonb: the text is what was hashed, byte for byte (jsonb
 * would reorder keys and refuse a \u0000 escape), and it stays queryable with `args::jsonb`.
 */
export class ZmoduGuardAuditPayload1764540000000 implements MigrationInterface {
  name = 'ZmoduGuardAuditPayload1764540000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_audit_log ADD COLUMN IF NOT EXISTS args text, ADD COLUMN IF NOT EXISTS result text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_audit_log DROP COLUMN IF EXISTS result, DROP COLUMN IF EXISTS args`);
  }
}
