import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AgentRegistry } from './agent.registry';
import { ConfigurableAgentModule } from './agent.module-definition';
import { McpToolsLoader } from './mcp-client/mcp-tools.loader';
import { AgentCronCheck } from './jobs/agent-cron.check';

/**
 * Guarded agents for a Nest application. The background worker and the scheduled jobs are modules of their own
 * (AgentWorkerModule, AgentJobsModule), imported next to this one.
 *
 * @example
 * AgentModule.forRoot({
 *   agents: [{ name: 'trader', provider, skills: ['market.quote', 'order.draft', 'order.submit'],
 *              guard: { allow: ['market.quote', 'order.draft', 'order.submit', 'weather.get_forecast'], allowExecute: false } }],
 *   // The listed tools of external MCP servers become skills named '<server>.<tool>'.
 *   mcpServers: [{ name: 'weather', command: 'npx', args: ['-y', 'some-weather-mcp-server'] }],
 * }),
 * // Goals posted with AgentWorker.post run in the background, stored in zmodu_agent_runs; with pg-boss, on any instance.
 * AgentWorkerModule.forRoot({ concurrency: 4, runStore: 'typeorm', queue: { driver: 'pg-boss' } }),
 * // @AgentJob declarations and jobs scheduled with the schedule_job skill post their goals to the worker.
 * AgentJobsModule.forRoot({ store: 'typeorm', schedulableTasks: [{ name: 'daily_report', agent: 'trader', goal: 'Send the daily report' }] }),
 */
@Module({
  imports: [DiscoveryModule],
  // AgentCronCheck refuses @AgentJob and @AgentCron declarations at boot without AgentJobsModule (they would never fire).
  providers: [AgentRegistry, McpToolsLoader, AgentCronCheck],
  exports: [AgentRegistry],
})
export class AgentModule extends ConfigurableAgentModule {}
