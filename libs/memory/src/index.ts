// The public API of @zmodu/memory. Anything not named here is internal.
export { MemoryModule } from './memory.module';
export type { MemoryModuleAsyncOptions } from './memory.module-definition';
export { DEFAULT_MAX_CHARS, DEFAULT_MAX_ENTRIES, MEMORY_SKILL_KEYS, MemoryModuleOptions } from './memory.options';
export type { MemorySkillPermissions } from './memory.options';
export { InjectMemoryStore, MEMORY_STORE } from './memory.constants';
export type { MemoryStore } from './memory.store';
export type {
  Embedder,
  MemoryEntry,
  MemoryListQuery,
  MemoryRanker,
  MemoryScope,
  MemoryStoreOptions,
  MemoryWriteToken,
  NewMemoryEntry,
  RecallCaps,
} from './memory.types';
export { MemoryRecall } from './memory-recall';
export { MEMORY_FENCE_CLOSE, MEMORY_FENCE_OPEN, memoryBlock } from './memory-block';
export { DEFAULT_MAX_NOTES_PER_USER, MAX_CONTENT_CHARS } from './memory-scope';
export { fullTextRanker } from './full-text.ranker';
export { TypeOrmMemoryStore } from './typeorm-memory.store';
export { InMemoryMemoryStore } from './in-memory-memory.store';
export { ZMODU_MEMORY_MIGRATIONS } from './memory.migration';
export { InvalidMemoryEntryException } from './exceptions/invalid-memory-entry.exception';
export { InvalidMemoryOptionsException } from './exceptions/invalid-memory-options.exception';
export { InvalidMemoryQueryException } from './exceptions/invalid-memory-query.exception';
export { InvalidMemoryScopeException } from './exceptions/invalid-memory-scope.exception';
export { MemoryDataSourceMissingException } from './exceptions/memory-data-source-missing.exception';
export { MemoryErasedException } from './exceptions/memory-erased.exception';
export { MemoryFullException } from './exceptions/memory-full.exception';
