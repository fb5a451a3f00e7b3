export { adminConfigStoreContract } from './admin-config-store.contract';
export type { AdminConfigStoreHarness } from './admin-config-store.contract';
