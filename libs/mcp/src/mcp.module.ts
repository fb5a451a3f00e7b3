import { Module } from '@nestjs/common';
import { MCP_OPTIONS } from './mcp.constants';
import { ConfigurableMcpModule, MCP_MODULE_OPTIONS } from './mcp.module-definition';
import { McpModuleOptions, ResolvedMcpOptions } from './mcp.options';
import { McpSessions } from './mcp-sessions';

/**
 * The skill catalog as an MCP server over Streamable HTTP at `path` (default '/mcp'), behind the
 * application's own authentication: `forRoot({ path, policy, principal? })` or
 * `forRootAsync({ path, useFactory, inject })`. Needs SkillsModule and GuardModule in the application
 * (AgentModule imports both).
 */
@Module({
  providers: [
    { provide: MCP_OPTIONS, inject: [MCP_MODULE_OPTIONS], useFactory: (raw: McpModuleOptions) => new ResolvedMcpOptions(raw) },
    McpSessions,
  ],
  exports: [McpSessions],
})
export class McpModule extends ConfigurableMcpModule {}
