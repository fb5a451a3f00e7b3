import { AgentSpec } from './agent-definition';
import { McpServerOptions } from './mcp-client/mcp-server-options';
import { AgentJobsOptions } from './jobs/agent-jobs.options';
import { AgentWorkerOptions } from './worker/agent-worker.options';
import { AgentQueueOptions } from './worker/agent-queue.options';

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
  /**
   * Where the worker's goals wait (needs `worker`): `{ driver: 'in-process' }` (the default) or, for several
   * instances on one PostgreSQL, `{ driver: 'pg-boss' }` (cluster mode): a goal posted on any instance may run on
   * any, and the goals of an instance that died are taken over by the others once their leases expire.
   */
  queue?: AgentQueueOptions;
  /**
   * Scheduled agent jobs (needs `worker`): `@AgentJob` declarations found at boot, the scheduler (started after the
   * worker, stopped before it) and the skills list_schedulable_tasks, schedule_job, list_jobs and cancel_job.
   */
  jobs?: AgentJobsOptions;
}
