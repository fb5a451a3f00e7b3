import { Injectable } from '@nestjs/common';
import { AgentJob, AgentJobSkillPermissions, SchedulableTask } from '@zmodu/agent';
import { PERMISSIONS } from '../auth/auth.constants';

/** The goal of the desk's morning summary: the read-only analyst quotes and counts the desk's orders. */
export const MORNING_SUMMARY_GOAL = 'Morning market summary for the desk: quote ACME and count the desk orders by status.';

/**
 * What the `schedule_job` skill may schedule (by name; the model never writes a goal). Both run on the read-only
 * analyst with market:read only (what it quotes and queries with), and only if the user who scheduled them holds it.
 */
export const SAMPLE_SCHEDULABLE_TASKS: SchedulableTask[] = [
  {
    name: 'morning_summary',
    agent: 'analyst',
    goal: MORNING_SUMMARY_GOAL,
    description: "A market summary for the desk: the ACME quote and the desk's orders by status.",
    permissions: [PERMISSIONS.marketRead],
  },
  {
    name: 'open_orders_check',
    agent: 'analyst',
    goal: 'Open orders check: count the desk orders by status and say how many are still open.',
    description: "How many of the desk's orders are still open.",
    permissions: [PERMISSIONS.marketRead],
  },
];

/**
 * The permission code each job skill asks of its caller (`jobs.permissions`): job:read to list the tasks and the
 * tenant's jobs, job:schedule to create or cancel one (a job runs with its task's permissions that its creator holds).
 */
export const SAMPLE_JOB_PERMISSIONS: AgentJobSkillPermissions = {
  list_schedulable_tasks: PERMISSIONS.jobRead,
  list_jobs: PERMISSIONS.jobRead,
  schedule_job: PERMISSIONS.jobSchedule,
  cancel_job: PERMISSIONS.jobSchedule,
};

/** The read-only permissions the desk's static job runs with: it quotes and queries, nothing else. */
export const DESK_JOB_PERMISSIONS = [PERMISSIONS.marketRead];

/**
 * The acme desk's static job: every weekday at 08:30 New York time (before the US open), the analyst writes the
 * morning summary as the desk's service user, with read-only permissions. Upserted at boot as
 * `static:acme-morning-summary`; a tick missed while the app was down is skipped.
 */
@Injectable()
export class DeskJobs {
  @AgentJob({
    name: 'acme-morning-summary',
    agent: 'analyst',
    cron: '30 8 * * 1-5',
    timeZone: 'America/New_York',
    goal: MORNING_SUMMARY_GOAL,
    tenantId: 'acme',
    userId: 'desk-bot',
    permissions: DESK_JOB_PERMISSIONS,
    missed: 'skip',
  })
  morningSummary(): void {}
}
