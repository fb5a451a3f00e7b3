import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentRegistry } from './agent.registry';
import { ConfigurableAgentModule } from './agent.module-definition';
import { McpToolsLoader } from './mcp-client/mcp-tools.loader';
import { AgentJobsRunner } from './jobs/agent-jobs.runner';
import { AgentJobTicks } from './jobs/agent-job-ticks';
import { AGENT_JOB_STORE, agentJobStoreProvider } from './jobs/agent-job-store.provider';
import { AgentWorker } from './worker/agent-worker';
import { AGENT_GOAL_QUEUE, AGENT_RUN_STORE } from './worker/agent-worker.constants';
import { agentRunStoreProvider } from './worker/agent-run-store.provider';
import { goalQueueProvider } from './worker/goal-queue.provider';

/**
 * Guarded agents for a Nest application.
 *
 * @example
 * AgentModule.forRoot({
 *   agents: [{ name: 'trader', provider, skills: ['market.quote', 'order.draft', 'order.submit'],
 *              guard: { allow: ['market.quote', 'order.draft', 'order.submit', 'weather.get_forecast'], allowExecute: false } }],
 *   // The listed tools of external MCP servers become skills named '<server>.<tool>'.
 *   mcpServers: [{ name: 'weather', command: 'npx', args: ['-y', 'some-weather-mcp-server'] }],
 *   // Goals posted with AgentWorker.post run in the background, stored in zmodu_agent_runs.
 *   worker: { concurrency: 4, runStore: 'typeorm' },
 *   // Several instances on one PostgreSQL: the goals wait in a pg-boss queue; any instance runs any goal.
 *   queue: { driver: 'pg-boss' },
 *   // @AgentJob declarations and jobs scheduled with the schedule_job skill post their goals to the worker.
 *   jobs: { store: 'typeorm', schedulableTasks: [{ name: 'daily_report', agent: 'trader', goal: 'Send the daily report' }] },
 * })
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    AgentRegistry,
    McpToolsLoader,
    agentRunStoreProvider,
    goalQueueProvider,
    AgentWorker,
    agentJobStoreProvider,
    AgentJobTicks,
    AgentJobsRunner,
  ],
  // AGENT_GOAL_QUEUE: for a health check of the queue in cluster mode (GoalQueueHealthIndicator of @zmodu/admin).
  // AGENT_RUN_STORE (null without a worker): the run behind a proposal, for the approvals console (@zmodu/admin).
  exports: [AgentRegistry, AgentWorker, AgentJobsRunner, AgentJobTicks, AGENT_JOB_STORE, AGENT_GOAL_QUEUE, AGENT_RUN_STORE],
})
export class AgentModule extends ConfigurableAgentModule {}
