import { Inject, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { challengeMiddleware, metadataMiddleware } from './mcp-authorization';
import { MCP_OPTIONS, MCP_PATH } from './mcp.constants';
import { ConfigurableMcpModule, MCP_MODULE_OPTIONS } from './mcp.module-definition';
import { McpModuleOptions, ResolvedMcpOptions } from './mcp.options';
import { McpSessions } from './mcp-sessions';

/**
 * The skill catalog as an MCP server over Streamable HTTP at `path` (default '/mcp'), behind the
 * application's own authentication: `forRoot({ path, policy, principal? })` or
 * `forRootAsync({ path, useFactory, inject })`. Needs SkillsModule and GuardModule in the application
 * (AgentModule imports both), and the MCP server SDK (`npm install @modelcontextprotocol/server`).
 */
@Module({
  providers: [
    { provide: MCP_OPTIONS, inject: [MCP_MODULE_OPTIONS], useFactory: (raw: McpModuleOptions) => new ResolvedMcpOptions(raw) },
    McpSessions,
  ],
  exports: [McpSessions],
})
export class McpModule extends ConfigurableMcpModule implements NestModule {
  constructor(
    @Inject(MCP_OPTIONS) private readonly resolved: ResolvedMcpOptions,
    @Inject(MCP_PATH) private readonly path: string,
  ) {
    super();
  }

  /**
   * With `authorization`: the challenge on every 401 of the endpoint, and the protected resource metadata at its
   * well-known path, both as middleware (they run before the application's guards, which must not hide the document).
   */
  configure(consumer: MiddlewareConsumer): void {
    const auth = this.resolved.authorization;
    if (!auth) return;
    consumer.apply(challengeMiddleware(auth)).forRoutes({ path: this.path, method: RequestMethod.ALL });
    consumer.apply(metadataMiddleware(auth)).forRoutes({ path: auth.metadataPath, method: RequestMethod.ALL });
  }
}
