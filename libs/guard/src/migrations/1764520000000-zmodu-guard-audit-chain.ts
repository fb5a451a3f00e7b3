import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 14: the audit log becomes a hash chain per tenant (seq, prev_hash, hash). Rows written before it stay out of the
 * chain (their seq is null): they were never hashed when written, so hashing them now would vouch for whatever they hold
 * today. The verifier ignores them, and reports as inserted a row without a chain written after a tenant's chain began.
 */
export class ZmoduGuardAuditChain1764520000000 implements MigrationInterface {
  name = 'ZmoduGuardAuditChain1764520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE zmodu_audit_log ADD COLUMN IF NOT EXISTS seq bigint, ADD COLUMN IF NOT EXISTS prev_hash text, ADD COLUMN IF NOT EXISTS hash text`,
    );
    // One entry per sequence number and tenant: a second writer that got past the lock could not fork the chain.
    await q.query(`CREATE UNIQUE INDEX IF NOT EXISTS zmodu_audit_log_chain_idx ON zmodu_audit_log (tenant_id, seq) WHERE seq IS NOT NULL`);
    await q.query(
      `CREATE UNIQUE INDEX IF NOT EXISTS zmodu_audit_log_chain_untenanted_idx ON zmodu_audit_log (seq) WHERE tenant_id IS NULL AND seq IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS zmodu_audit_log_chain_untenanted_idx`);
    await q.query(`DROP INDEX IF EXISTS zmodu_audit_log_chain_idx`);
    await q.query(`ALTER TABLE zmodu_audit_log DROP COLUMN IF EXISTS hash, DROP COLUMN IF EXISTS prev_hash, DROP COLUMN IF EXISTS seq`);
  }
}
