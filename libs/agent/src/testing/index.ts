export { agentRunStoreContract } from './agent-run-store.contract';
export type { AgentRunStoreHarness } from './agent-run-store.contract';
export { agentJobStoreContract } from './agent-job-store.contract';
export type { AgentJobStoreHarness } from './agent-job-store.contract';
