import { MigrationInterface, QueryRunner } from 'typeorm';

/** The scheduled jobs and their tick claims (`TypeOrmAgentJobStore`). */
export class ZmoduAgentJobs1764570000000 implements MigrationInterface {
  name = 'ZmoduAgentJobs1764570000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_agent_jobs (
      id text PRIMARY KEY,
      tenant_id text NOT NULL CHECK (tenant_id <> ''),
      user_id text NOT NULL CHECK (user_id <> ''),
      permissions jsonb NOT NULL DEFAULT '[]',
      agent text,
      goal text NOT NULL,
      cron text NOT NULL,
      time_zone text NOT NULL,
      missed text NOT NULL CHECK (missed IN ('skip', 'catch_up')),
      origin text NOT NULL CHECK (origin IN ('static', 'dynamic')),
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      cancelled_at timestamptz,
      last_tick_at timestamptz
    )`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_agent_jobs_tenant_idx ON zmodu_agent_jobs (tenant_id) WHERE cancelled_at IS NULL`);
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_agent_job_ticks (
      job_id text NOT NULL,
      tick timestamptz NOT NULL,
      run_id text,
      PRIMARY KEY (job_id, tick)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_agent_job_ticks`);
    await q.query(`DROP TABLE IF EXISTS zmodu_agent_jobs`);
  }
}

/** When a tick was claimed: a tick claimed but never posted (its instance died) is claimed again by a sync. */
export class ZmoduAgentJobTickClaims1764580000000 implements MigrationInterface {
  name = 'ZmoduAgentJobTickClaims1764580000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_agent_job_ticks ADD COLUMN IF NOT EXISTS claimed_at timestamptz NOT NULL DEFAULT clock_timestamp()`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS zmodu_agent_job_ticks_unposted_idx ON zmodu_agent_job_ticks (claimed_at) WHERE run_id IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS zmodu_agent_job_ticks_unposted_idx`);
    await q.query(`ALTER TABLE zmodu_agent_job_ticks DROP COLUMN IF EXISTS claimed_at`);
  }
}

/**
 * The task a dynamic job was made from and its expiry: a job keeps the permissions its task declares (narrowed at the
 * next boot for jobs stored before, see AgentJobsRunner) and fires no more from `expires_at` on.
 */
export class ZmoduAgentJobScope1764630270000 implements MigrationInterface {
  name = 'ZmoduAgentJobScope1764630270000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_agent_jobs ADD COLUMN IF NOT EXISTS task text`);
    await q.query(`ALTER TABLE zmodu_agent_jobs ADD COLUMN IF NOT EXISTS expires_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_agent_jobs DROP COLUMN IF EXISTS expires_at`);
    await q.query(`ALTER TABLE zmodu_agent_jobs DROP COLUMN IF EXISTS task`);
  }
}

/** The migrations of the job tables, in order (part of ZMODU_AGENT_MIGRATIONS). */
export const ZMODU_AGENT_JOB_MIGRATIONS = [
  ZmoduAgentJobs1764570000000,
  ZmoduAgentJobTickClaims1764580000000,
  ZmoduAgentJobScope1764630270000,
];
