import { checkStoreChoice, ownOptions } from '@zmodu/core';
import type { StoreChoice } from '@zmodu/core';
import { resolveSkillPermissions } from '@zmodu/skills/internal';
import { SkillPermissions } from '@zmodu/skills';
import { InvalidMemoryOptionsException } from './exceptions/invalid-memory-options.exception';
import { checkStoreOptions, DEFAULT_MAX_NOTES_PER_USER } from './memory-scope';
import { InMemoryMemoryStore } from './in-memory-memory.store';
import { MemoryStore } from './memory.store';
import { MemoryRanker } from './memory.types';

/** Entries and characters of content one recall injects, when nothing else is said. */
export const DEFAULT_MAX_ENTRIES = 8;
export const DEFAULT_MAX_CHARS = 2_000;

/** The keys of `MemoryModuleOptions.permissions`: `remember` is memory.remember, `recall` is memory.recall. */
export const MEMORY_SKILL_KEYS = ['remember', 'recall'] as const;
/** The permission code memory.remember and memory.recall require, e.g. `{ remember: 'memory:write' }`; a key left out: none. */
export type MemorySkillPermissions = SkillPermissions<(typeof MEMORY_SKILL_KEYS)[number]>;

/** Options of `MemoryModule.forRoot` / `forRootAsync`. Every field has a default. */
export class MemoryModuleOptions {
  /**
   * 'typeorm' (default): a TypeOrmMemoryStore on the app's DataSource; 'memory': an InMemoryMemoryStore (lost at
   * restart); or your MemoryStore (it must pass memoryStoreContract).
   */
  store?: StoreChoice<MemoryStore> = 'typeorm';
  /** How the default store ranks entries for a goal. Default full-text search (fullTextRanker). */
  ranker?: MemoryRanker;
  /** Entries one recall injects at most. Default 8. */
  maxEntries?: number = DEFAULT_MAX_ENTRIES;
  /** Characters of content one recall injects at most. Default 2000. */
  maxChars?: number = DEFAULT_MAX_CHARS;
  /**
   * The most unexpired notes one user keeps in the default store (200): a note past it is refused (`memory_full` from
   * memory.remember, MemoryFullException from the store), nothing is evicted. A store of yours keeps its own cap.
   */
  maxNotesPerUser?: number = DEFAULT_MAX_NOTES_PER_USER;
  /** Register the memory.remember and memory.recall skills. Default true. */
  skills?: boolean = true;
  /**
   * The permission code each skill requires of its caller, e.g. `{ remember: 'memory:write', recall: 'memory:read' }`:
   * without it the dispatcher refuses the call (PermissionDenied). Default `{}`: neither requires one.
   */
  permissions?: MemorySkillPermissions = {};
}

/** What MemoryModule tells the store resolver of @zmodu/core about its `store` (the resolver's checks and errors). */
export const MEMORY_STORE_CHOICE = {
  option: 'MemoryModule.forRoot({ store })',
  keeps: 'the memory notes',
  methods: ['beginWrite', 'remember', 'recall', 'forget', 'erase', 'list'],
  memory: () => new InMemoryMemoryStore(),
  invalid: (problem: string) => new InvalidMemoryOptionsException(`store: ${problem}`),
} as const;

/** The options after the defaults are merged. */
export type ResolvedMemoryOptions = Required<Omit<MemoryModuleOptions, 'ranker'>> & Pick<MemoryModuleOptions, 'ranker'>;

const isCap = (n: unknown, max: number) => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= max;

/** Merge the given options over the defaults, once; throws InvalidMemoryOptionsException on what cannot work. */
export function resolveMemoryOptions(raw: Partial<MemoryModuleOptions> | undefined): ResolvedMemoryOptions {
  const given = ownOptions(raw);
  const o = Object.assign(new MemoryModuleOptions(), given) as ResolvedMemoryOptions;
  if (!isCap(o.maxEntries, 1_000))
    throw new InvalidMemoryOptionsException(`maxEntries must be an integer from 1 to 1000, got ${String(o.maxEntries)}`);
  if (!isCap(o.maxChars, 1_000_000))
    throw new InvalidMemoryOptionsException(`maxChars must be an integer from 1 to 1000000, got ${String(o.maxChars)}`);
  const store = o.store as unknown;
  checkStoreChoice({ ...MEMORY_STORE_CHOICE, choice: store });
  checkStoreOptions({ maxNotesPerUser: o.maxNotesPerUser });
  if (store !== 'typeorm' && store !== 'memory' && given && Object.hasOwn(given, 'maxNotesPerUser'))
    throw new InvalidMemoryOptionsException(
      'maxNotesPerUser sets the cap of the default store: give your MemoryStore its own (e.g. new InMemoryMemoryStore({ maxNotesPerUser }))',
    );
  o.permissions = resolveSkillPermissions(o.permissions, MEMORY_SKILL_KEYS, 'permissions', (field, problem) => {
    throw new InvalidMemoryOptionsException(`${field}: ${problem}`);
  });
  return o;
}
