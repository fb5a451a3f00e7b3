import { Module } from '@nestjs/common';
import { AgentRegistry } from './agent.registry';
import { ConfigurableAgentModule } from './agent.module-definition';
import { McpToolsLoader } from './mcp-client/mcp-tools.loader';

/**
 * Guarded agents for a Nest application.
 *
 * @example
 * AgentModule.forRoot({
 *   agents: [{ name: 'trader', provider, skills: ['market.quote', 'order.draft', 'order.submit'],
 *              guard: { allow: ['market.quote', 'order.draft', 'order.submit', 'weather.get_forecast'], allowExecute: false } }],
 *   // The listed tools of external MCP servers become skills named '<server>.<tool>'.
 *   mcpServers: [{ name: 'weather', command: 'npx', args: ['-y', 'some-weather-mcp-server'] }],
 * })
 */
@Module({
  providers: [AgentRegistry, McpToolsLoader],
  exports: [AgentRegistry],
})
export class AgentModule extends ConfigurableAgentModule {}
