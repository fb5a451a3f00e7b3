// @zmodu/memory/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/memory and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { TypeOrmMemoryStore } from './typeorm-memory.store';
export { InvalidMemoryEntryException } from './exceptions/invalid-memory-entry.exception';
export { InvalidMemoryOptionsException } from './exceptions/invalid-memory-options.exception';
export { InvalidMemoryQueryException } from './exceptions/invalid-memory-query.exception';
export { InvalidMemoryScopeException } from './exceptions/invalid-memory-scope.exception';
export { MEMORY_STORE } from './memory.constants';
