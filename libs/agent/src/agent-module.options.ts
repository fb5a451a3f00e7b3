import { AgentSpec } from './agent-definition';
import { McpServerOptions } from './mcp-client/mcp-server-options';
import { AgentWorkerOptions } from './worker/agent-worker.options';

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
  /**
   * The AgentWorker: goals posted with `AgentWorker.post` run in the background, stored as runs (default: in the
   * app's TypeORM DataSource, the table of ZMODU_AGENT_MIGRATIONS). Without it AgentWorker is still injectable but
   * `post` and `get` throw WorkerDisabledException.
   */
  worker?: AgentWorkerOptions;
}
