import { MigrationInterface, QueryRunner } from 'typeorm';
import { ZMODU_AGENT_JOB_MIGRATIONS } from '../jobs/agent-job.migration';

/** The run records of the AgentWorker (`TypeOrmAgentRunStore`). */
export class ZmoduAgentRuns1764560000000 implements MigrationInterface {
  name = 'ZmoduAgentRuns1764560000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_agent_runs (
      id text PRIMARY KEY,
      tenant_id text NOT NULL CHECK (tenant_id <> ''),
      user_id text NOT NULL CHECK (user_id <> ''),
      permissions jsonb NOT NULL DEFAULT '[]',
      agent text NOT NULL,
      goal text NOT NULL,
      job_id text,
      job_tick text,
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'interrupted', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      answer text,
      stopped_reason text,
      steps jsonb NOT NULL DEFAULT '[]',
      pending_approvals jsonb NOT NULL DEFAULT '[]',
      error text,
      lease_owner text,
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      started_at timestamptz,
      finished_at timestamptz
    )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS zmodu_agent_runs_open_idx ON zmodu_agent_runs (status, created_at) WHERE status IN ('queued', 'running', 'interrupted')`,
    );
    await q.query(
      `CREATE UNIQUE INDEX IF NOT EXISTS zmodu_agent_runs_tick_idx ON zmodu_agent_runs (job_id, job_tick) WHERE job_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_agent_runs`);
  }
}

/** Every migration of @zmodu/agent: the AgentWorker's runs and the scheduled jobs. */
export const ZMODU_AGENT_MIGRATIONS = [ZmoduAgentRuns1764560000000, ...ZMODU_AGENT_JOB_MIGRATIONS];
