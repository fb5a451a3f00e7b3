import { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables of @zmodu/pipeline: proposals and the human decisions on them. */
export class ZmoduPipeline1764461100000 implements MigrationInterface {
  name = 'ZmoduPipeline1764461100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_proposals (
      id uuid PRIMARY KEY,
      tenant_id text NOT NULL,
      action text NOT NULL,
      payload jsonb NOT NULL,
      amount numeric,
      proposer text NOT NULL,
      status text NOT NULL CHECK (status IN ('refused', 'rejected', 'pending', 'approved', 'executed', 'failed', 'expired')),
      verdict text NOT NULL,
      reason text,
      steps jsonb NOT NULL,
      approvals integer NOT NULL DEFAULT 0,
      run_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      executed_at timestamptz,
      result jsonb
    )`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_proposals_tenant_status_idx ON zmodu_proposals (tenant_id, status, created_at)`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_proposals_approved_idx ON zmodu_proposals (status) WHERE status = 'approved'`);
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_approval_decisions (
      id bigserial PRIMARY KEY,
      proposal_id uuid NOT NULL REFERENCES zmodu_proposals (id),
      step integer NOT NULL,
      decided_by text NOT NULL,
      decision text NOT NULL CHECK (decision IN ('approve', 'reject')),
      reason text NOT NULL,
      at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT zmodu_approval_decisions_step UNIQUE (proposal_id, step),
      CONSTRAINT zmodu_approval_decisions_person UNIQUE (proposal_id, decided_by)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_approval_decisions`);
    await q.query(`DROP TABLE IF EXISTS zmodu_proposals`);
  }
}
