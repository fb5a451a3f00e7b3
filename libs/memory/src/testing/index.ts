export { memoryStoreContract } from './memory-store.contract';
export type { MemoryStoreHarness } from './memory-store.contract';
