export { proposalStoreContract } from './proposal-store.contract';
export type { ProposalStoreHarness } from './proposal-store.contract';
