import { AgentSpec } from './agent-definition';
import { McpServerOptions } from './mcp-client/mcp-server-options';

export class AgentModuleOptions {
  /** The agents of the application. */
  agents: AgentSpec[] = [];
  /** Make a policy that needs attention (inert, blind spot, unknown names) a boot error instead of a warning. */
  strictPolicies?: boolean = false;
  /**
   * External MCP servers whose tools become skills named `<server>.<tool>`: only the tools that an agent's
   * `guard.allow` or `skills` array names are registered, and every call passes the guard like any skill.
   */
  mcpServers?: McpServerOptions[] = [];
}
