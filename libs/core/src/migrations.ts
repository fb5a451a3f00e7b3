import { MIGRATION_UNNAMED_MESSAGE } from './core.messages';

/** A TypeORM migration class, or a glob of migration files (TypeORM's `migrations` option takes both). */
export type ZmoduMigration = (abstract new (...args: never[]) => object) | string;

/**
 * Migrations, or lists of them, as `zmoduMigrations` takes them: also `Function`, the type TypeORM's own `migrations`
 * option gives a class, so that a list typed for TypeORM can be passed on.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type ZmoduMigrationInput = ZmoduMigration | Function | readonly ZmoduMigrationInput[];

// One registry per process, shared by every copy of @zmodu/core that is loaded (an application and a CLI may each bring one).
const REGISTRY = Symbol.for('zmodu.migrations');
type MigrationClass = Exclude<ZmoduMigration, string>;
type Registry = Map<string, MigrationClass[]>;

function registry(): Registry {
  const g = globalThis as { [REGISTRY]?: Registry };
  return (g[REGISTRY] ??= new Map());
}

/**
 * Called once by each @zmodu package with tables, when it is loaded: its migrations, in order. A second copy of the
 * same package (another version in node_modules) adds nothing new: names are unique, the first copy's class is kept.
 */
export function registerMigrations<T extends readonly MigrationClass[]>(packageName: string, migrations: T): T {
  const known = registry();
  if (!known.has(packageName)) known.set(packageName, [...migrations]);
  return migrations;
}

function nameOf(m: MigrationClass): string | null {
  if (typeof m !== 'function') return null;
  // TypeORM names a migration by its instance's `name` (a field the class sets), else by its class name.
  let own: unknown;
  try {
    own = new (m as unknown as new () => { name?: unknown })().name;
  } catch {
    own = undefined;
  }
  if (typeof own === 'string' && own !== '') return own;
  return m.name !== '' ? m.name : null;
}

function timestampOf(name: string): number | null {
  const t = /(\d{13})$/.exec(name);
  return t ? Number(t[1]) : null;
}

function flatten(input: readonly ZmoduMigrationInput[], out: ZmoduMigration[]): void {
  for (const item of input) {
    if (Array.isArray(item)) flatten(item as readonly ZmoduMigrationInput[], out);
    else out.push(item as ZmoduMigration);
  }
}

/**
 * Every migration TypeORM needs for the @zmodu packages this process has loaded, then yours: one list for
 * `TypeOrmModule.forRoot({ migrations: zmoduMigrations(...yours) })`, ordered by timestamp (as TypeORM runs them),
 * each migration once (a list of ours given again, or a migration of yours given twice, is not a duplicate). A glob
 * string of yours is passed on as it is (TypeORM loads and orders its files). A package is loaded when something
 * imports it: in a TypeORM CLI data-source file, import the packages whose tables you want first (`import '@zmodu/agent';`).
 */
export function zmoduMigrations(...yours: readonly ZmoduMigrationInput[]): ZmoduMigration[] {
  const given: ZmoduMigration[] = [];
  flatten(yours, given);
  const all: MigrationClass[] = [];
  for (const list of registry().values()) all.push(...list);
  const globs: string[] = [];
  for (const m of given) {
    if (typeof m === 'string') globs.push(m);
    else all.push(m);
  }
  const seen = new Set<string>();
  const kept: Array<{ m: MigrationClass; at: number; i: number }> = [];
  all.forEach((m, i) => {
    const name = nameOf(m);
    const at = name === null ? null : timestampOf(name);
    if (name === null || at === null) throw new TypeError(MIGRATION_UNNAMED_MESSAGE(name === null ? describe(m) : `'${name}'`));
    if (seen.has(name)) return;
    seen.add(name);
    kept.push({ m, at, i });
  });
  return [...kept.sort((a, b) => a.at - b.at || a.i - b.i).map((k) => k.m), ...globs];
}

function describe(m: unknown): string {
  if (m === null) return 'null';
  if (m === undefined) return 'undefined (an import that is not there?)';
  if (typeof m === 'function') return 'an anonymous class';
  return typeof m === 'object' ? 'an object' : typeof m;
}
