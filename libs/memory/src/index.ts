// The public API of @zmodu/memory. Anything not named here is internal.
export { MemoryModule } from './memory.module';
export type { MemoryModuleAsyncOptions } from './memory.module-definition';
export { MemoryModuleOptions } from './memory.options';
export type { MemorySkillPermissions } from './memory.options';
export { InjectMemoryStore } from './memory.constants';
export type { MemoryStore } from './memory.store';
export type { Embedder, MemoryEntry, MemoryRanker, MemoryScope } from './memory.types';
export { MemoryRecall } from './memory-recall';
export { MEMORY_FENCE_CLOSE, MEMORY_FENCE_OPEN } from './memory-block';
export { ZMODU_MEMORY_MIGRATIONS } from './memory.migration';
export { MemoryErasedException } from './exceptions/memory-erased.exception';
export { MemoryFullException } from './exceptions/memory-full.exception';
export { ZmoduError } from '@zmodu/core';
