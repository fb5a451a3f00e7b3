import { Module } from '@nestjs/common';
import { AgentRegistry } from './agent.registry';
import { ConfigurableAgentModule } from './agent.module-definition';
import { McpToolsLoader } from './mcp-client/mcp-tools.loader';
import { AgentWorker } from './worker/agent-worker';
import { agentRunStoreProvider } from './worker/agent-run-store.provider';

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
 * })
 */
@Module({
  providers: [AgentRegistry, McpToolsLoader, agentRunStoreProvider, AgentWorker],
  exports: [AgentRegistry, AgentWorker],
})
export class AgentModule extends ConfigurableAgentModule {}
