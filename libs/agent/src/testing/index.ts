export { agentRunStoreContract } from './agent-run-store.contract';
export type { AgentRunStoreHarness } from './agent-run-store.contract';
