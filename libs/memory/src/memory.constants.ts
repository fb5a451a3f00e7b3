import { Inject } from '@nestjs/common';

/** Public token: the MemoryStore of MemoryModule. Inject it with `@InjectMemoryStore()` (e.g. for an admin's list and erase). */
export const MEMORY_STORE = Symbol('zmodu:MEMORY_STORE');

/** Inject the memory store (the `MEMORY_STORE` token). */
export const InjectMemoryStore = () => Inject(MEMORY_STORE);

/** Internal: MemoryModule's options with their defaults, merged once. */
export const MEMORY_OPTIONS = Symbol('zmodu:MEMORY_OPTIONS');
