import { registerMigrations } from '@zmodu/core';
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

/**
 * When each run was last claimed (the mailbox's measured drain), an index for a tenant's waiting runs (its
 * share of the mailbox), and the store's clock of contacts (one row: the last time an instance reached the store, and
 * the last outage), by which a recovery tells an outage from a dead instance.
 */
export class ZmoduAgentRunsFence1764612700000 implements MigrationInterface {
  name = 'ZmoduAgentRunsFence1764612700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_agent_runs ADD COLUMN IF NOT EXISTS claimed_at timestamptz`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_agent_runs_claimed_idx ON zmodu_agent_runs (claimed_at) WHERE claimed_at IS NOT NULL`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS zmodu_agent_runs_tenant_waiting_idx ON zmodu_agent_runs (tenant_id) WHERE status IN ('queued', 'interrupted')`,
    );
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_agent_run_clock (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      last_contact timestamptz NOT NULL,
      outage_from timestamptz,
      outage_to timestamptz
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_agent_run_clock`);
    await q.query(`DROP INDEX IF EXISTS zmodu_agent_runs_tenant_waiting_idx`);
    await q.query(`DROP INDEX IF EXISTS zmodu_agent_runs_claimed_idx`);
    await q.query(`ALTER TABLE zmodu_agent_runs DROP COLUMN IF EXISTS claimed_at`);
  }
}

/**
 * The run journal (AgentRunStore.appendJournal): a run's model turns and tool calls, one row per entry at its place
 * (`seq`), written once (the primary key), each as JSON text (text, not jsonb: any string a model or a skill returned
 * is writable, NUL escapes included). The tenant is kept with each entry, so a read names it.
 */
export class ZmoduAgentRunJournal1765100000000 implements MigrationInterface {
  name = 'ZmoduAgentRunJournal1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE IF NOT EXISTS zmodu_agent_run_journal (
      run_id text NOT NULL REFERENCES zmodu_agent_runs (id) ON DELETE CASCADE,
      tenant_id text NOT NULL,
      seq integer NOT NULL CHECK (seq >= 0),
      kind text NOT NULL CHECK (kind IN ('turn', 'intent', 'call')),
      step integer NOT NULL CHECK (step >= 0),
      entry text NOT NULL,
      written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (run_id, seq)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS zmodu_agent_run_journal`);
  }
}

/**
 * Runs that wait for a human (AgentRunStore.suspend / settle): status `waiting`, the proposals a run waits for, until
 * when, and the decisions recorded so far; the journal's entries of a wait and of a decision.
 */
export class ZmoduAgentRunWaits1765200000000 implements MigrationInterface {
  name = 'ZmoduAgentRunWaits1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_agent_runs DROP CONSTRAINT IF EXISTS zmodu_agent_runs_status_check`);
    await q.query(
      `ALTER TABLE zmodu_agent_runs ADD CONSTRAINT zmodu_agent_runs_status_check
         CHECK (status IN ('queued', 'running', 'interrupted', 'waiting', 'succeeded', 'failed'))`,
    );
    await q.query(`ALTER TABLE zmodu_agent_runs ADD COLUMN IF NOT EXISTS waiting_for jsonb NOT NULL DEFAULT '[]'::jsonb`);
    await q.query(`ALTER TABLE zmodu_agent_runs ADD COLUMN IF NOT EXISTS wait_until timestamptz`);
    await q.query(`ALTER TABLE zmodu_agent_runs ADD COLUMN IF NOT EXISTS decisions jsonb NOT NULL DEFAULT '[]'::jsonb`);
    await q.query(`CREATE INDEX IF NOT EXISTS zmodu_agent_runs_waiting_idx ON zmodu_agent_runs (wait_until) WHERE status = 'waiting'`);
    await q.query(`ALTER TABLE zmodu_agent_run_journal DROP CONSTRAINT IF EXISTS zmodu_agent_run_journal_kind_check`);
    await q.query(
      `ALTER TABLE zmodu_agent_run_journal ADD CONSTRAINT zmodu_agent_run_journal_kind_check
         CHECK (kind IN ('turn', 'intent', 'call', 'wait', 'decision'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE zmodu_agent_run_journal DROP CONSTRAINT IF EXISTS zmodu_agent_run_journal_kind_check`);
    await q.query(
      `ALTER TABLE zmodu_agent_run_journal ADD CONSTRAINT zmodu_agent_run_journal_kind_check CHECK (kind IN ('turn', 'intent', 'call'))`,
    );
    await q.query(`DROP INDEX IF EXISTS zmodu_agent_runs_waiting_idx`);
    await q.query(`ALTER TABLE zmodu_agent_runs DROP COLUMN IF EXISTS decisions`);
    await q.query(`ALTER TABLE zmodu_agent_runs DROP COLUMN IF EXISTS wait_until`);
    await q.query(`ALTER TABLE zmodu_agent_runs DROP COLUMN IF EXISTS waiting_for`);
    await q.query(`ALTER TABLE zmodu_agent_runs DROP CONSTRAINT IF EXISTS zmodu_agent_runs_status_check`);
    await q.query(
      `ALTER TABLE zmodu_agent_runs ADD CONSTRAINT zmodu_agent_runs_status_check
         CHECK (status IN ('queued', 'running', 'interrupted', 'succeeded', 'failed'))`,
    );
  }
}

/** Every migration of @zmodu/agent (the AgentWorker's runs and the scheduled jobs), in order. `zmoduMigrations()` includes them once @zmodu/agent is loaded. */
export const ZMODU_AGENT_MIGRATIONS = registerMigrations('@zmodu/agent', [
  ZmoduAgentRuns1764560000000,
  ZmoduAgentRunsFence1764612700000,
  ...ZMODU_AGENT_JOB_MIGRATIONS,
  ZmoduAgentRunJournal1765100000000,
  ZmoduAgentRunWaits1765200000000,
]);
