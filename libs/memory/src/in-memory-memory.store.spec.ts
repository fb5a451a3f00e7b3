import { memoryStoreContract } from './testing';
import { InMemoryMemoryStore } from './in-memory-memory.store';

memoryStoreContract('InMemoryMemoryStore (contract)', async (options) => ({ store: new InMemoryMemoryStore(options) }));
