import { Module } from '@nestjs/common';
import { AgentWorker } from './agent-worker';
import { AGENT_GOAL_QUEUE, AGENT_RUN_STORE } from './agent-worker.constants';
import { ConfigurableAgentWorkerModule } from './agent-worker.module-definition';
import { agentRunStoreProvider } from './agent-run-store.provider';
import { goalQueueProvider } from './goal-queue.provider';

/**
 * The AgentWorker: goals posted with `AgentWorker.post` run in the background, stored as runs (default: in the app's
 * TypeORM DataSource, the table of ZMODU_AGENT_MIGRATIONS), on this instance or, with `queue: { driver: 'pg-boss' }`,
 * on any instance of the cluster. Import it next to AgentModule (whose agents it runs); it is global.
 *
 * @example
 * AgentModule.forRoot({ agents: [trader] }),
 * AgentWorkerModule.forRoot({ concurrency: 4, runStore: 'typeorm', queue: { driver: 'pg-boss' } }),
 */
@Module({
  providers: [agentRunStoreProvider, goalQueueProvider, AgentWorker],
  // AGENT_GOAL_QUEUE: for a health check of the queue in cluster mode (GoalQueueHealthIndicator of @zmodu/admin).
  // AGENT_RUN_STORE: the run behind a proposal, for the approvals console (@zmodu/admin).
  exports: [AgentWorker, AGENT_RUN_STORE, AGENT_GOAL_QUEUE],
})
export class AgentWorkerModule extends ConfigurableAgentWorkerModule {}
