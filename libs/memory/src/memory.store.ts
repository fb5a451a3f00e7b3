import { MemoryEntry, MemoryListQuery, MemoryScope, MemoryWriteToken, NewMemoryEntry, RecallCaps } from './memory.types';

/**
 * Where memory lives. Every read, list, recall and delete is keyed by the scope's tenant AND user
 * (two separate keys); a scope that is not valid (see MemoryScope) finds nothing and deletes nothing,
 * and a write refuses it (InvalidMemoryScopeException). Yours must pass `memoryStoreContract`
 * from `@zmodu/memory/testing`.
 */
export interface MemoryStore {
  /** Start a write: the scope's erase epoch now. A `remember` with this token lands only if no erase happened since. */
  beginWrite(scope: MemoryScope): Promise<MemoryWriteToken>;
  /**
   * Store an entry; returns its id. With `token`, refused (MemoryErasedException) if the scope was
   * erased after `beginWrite`; without one, the epoch is read when the write starts. Refused
   * (MemoryFullException, nothing evicted) when the scope already holds `maxNotesPerUser` unexpired
   * notes: the count and the insert are one atomic step, so writes at once never pass it.
   */
  remember(scope: MemoryScope, entry: NewMemoryEntry, token?: MemoryWriteToken): Promise<string>;
  /** The scope's unexpired entries most relevant to `query`, then the most recent, within the caps. */
  recall(scope: MemoryScope, query: string, caps: RecallCaps): Promise<MemoryEntry[]>;
  /** Delete one entry of the scope; false when the scope has no such entry. */
  forget(scope: MemoryScope, id: string): Promise<boolean>;
  /** The right to be forgotten: delete all of the scope's entries at once and refuse writes started before; returns how many went. */
  erase(scope: MemoryScope): Promise<number>;
  /** The scope's unexpired entries, newest first, a page at a time (for an admin). */
  list(scope: MemoryScope, query: MemoryListQuery): Promise<MemoryEntry[]>;
}
