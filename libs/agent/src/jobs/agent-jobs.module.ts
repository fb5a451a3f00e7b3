import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentJobTicks } from './agent-job-ticks';
import { AgentJobsRunner } from './agent-jobs.runner';
import { AGENT_JOB_STORE, agentJobStoreProvider } from './agent-job-store.provider';
import { AGENT_JOBS_MODULE_OPTIONS, ConfigurableAgentJobsModule } from './agent-jobs.module-definition';

/**
 * Scheduled agent jobs: `@AgentJob` declarations found at boot, the scheduler (started after the worker, stopped
 * before it), `@AgentCron` and AgentJobTicks (one goal per tick across the cluster), and the skills
 * list_schedulable_tasks, schedule_job, list_jobs and cancel_job. The goals go to the AgentWorker: import
 * AgentWorkerModule too. Global.
 *
 * @example
 * AgentModule.forRoot({ agents: [reporter] }),
 * AgentWorkerModule.forRoot({ runStore: 'typeorm' }),
 * AgentJobsModule.forRoot({ store: 'typeorm', schedulableTasks: [{ name: 'daily_report', goal: 'Send the daily report' }] }),
 */
@Module({
  imports: [DiscoveryModule],
  providers: [agentJobStoreProvider, AgentJobTicks, AgentJobsRunner],
  exports: [AgentJobTicks, AgentJobsRunner, AGENT_JOB_STORE, AGENT_JOBS_MODULE_OPTIONS],
})
export class AgentJobsModule extends ConfigurableAgentJobsModule {}
