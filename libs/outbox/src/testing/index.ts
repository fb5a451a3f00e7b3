export { outboxStoreContract } from './outbox-store.contract';
export type { OutboxStoreHarness } from './outbox-store.contract';
