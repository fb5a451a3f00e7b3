/**
 * Whose memory: a tenant and a user, two separate keys (never joined into one string). Both must be
 * non-empty strings that are not only whitespace and not '0'; anything else is no scope at all.
 */
export interface MemoryScope {
  readonly tenantId: string;
  readonly userId: string;
}

/** What `remember` stores. */
export interface NewMemoryEntry {
  /** The agent (or 'direct') that wrote it. */
  readonly agent: string;
  /** The note itself, plain text. */
  readonly content: string;
  /** A short label: 'preference', 'fact', 'note'... */
  readonly kind: string;
  /** After this instant the entry is never recalled nor listed. */
  readonly expiresAt?: Date | null;
}

/** One remembered entry. */
export interface MemoryEntry {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly agent: string;
  readonly kind: string;
  readonly content: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
}

/** Options of the stores of @zmodu/memory. */
export interface MemoryStoreOptions {
  /**
   * The most unexpired notes one user (of one tenant) keeps: a write past it is refused with MemoryFullException (nothing
   * is evicted); expired notes do not count and go with the next write. Default 200 (DEFAULT_MAX_NOTES_PER_USER).
   */
  readonly maxNotesPerUser?: number;
}

/** Caps of one recall: at most `maxEntries` entries of `maxChars` characters of content in all. */
export interface RecallCaps {
  readonly maxEntries: number;
  readonly maxChars: number;
}

/** A page of an admin listing, newest first. */
export interface MemoryListQuery {
  readonly limit: number;
  readonly offset?: number;
}

/**
 * The erase epoch of a scope, read when a write starts (`MemoryStore.beginWrite`). The write lands
 * only if no erase of that scope happened since; otherwise it is refused (MemoryErasedException).
 */
export interface MemoryWriteToken {
  readonly tenantId: string;
  readonly userId: string;
  readonly epoch: string;
}

/**
 * How `TypeOrmMemoryStore.recall` orders a scope's entries for a goal. The default is
 * `fullTextRanker` (PostgreSQL full-text search, 'simple' configuration). A ranker gives the goal's
 * query parameter and a SQL score over the row alias `m`; rows scoring 0 or NULL do not match and
 * fill the caps by recency.
 *
 * A pgvector ranker would plug in like this (not built here): a migration adds
 * `embedding vector(N)` to zmodu_memory (filled by your own job or trigger from an `Embedder`),
 * `prepare(goal)` returns `'[' + (await embedder.embed([goal]))[0].join(',') + ']'`, and
 * `score(p)` returns `1 - (m.embedding <=> ${p}::vector)`. The scope predicate stays in the store.
 */
export interface MemoryRanker {
  readonly name: string;
  /** The query parameter for `score` from the goal (the text itself, or an embedding literal). */
  prepare(goal: string): Promise<unknown> | unknown;
  /** A SQL expression scoring row `m` against the parameter `param` (e.g. '$3'); higher first. */
  score(param: string): string;
}

/** Turns texts into vectors, for a vector ranker (see MemoryRanker). Not used by the default ranker. */
export interface Embedder {
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<number[][]>;
}
