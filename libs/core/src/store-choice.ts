import { DataSourceMissingException } from './exceptions/data-source-missing.exception';

/**
 * Where a module keeps what it stores, the same three choices in every module that has a store:
 * - 'typeorm' (the default): a store on the application's TypeORM DataSource (run `zmoduMigrations()`);
 * - 'memory': an in-process store, lost at restart (tests, demos, a single process);
 * - an object implementing the module's store port: your own store (run the port's contract suite against it).
 */
export type StoreChoice<T> = 'typeorm' | 'memory' | T;

/** What a module tells `resolveStoreChoice` about one of its stores. */
export interface StoreChoiceSpec<T, D> {
  /** The option as given (not yet checked: it may come from an untyped forRootAsync factory). */
  readonly choice: unknown;
  /** Where the option is written, for the errors: e.g. "MemoryModule.forRoot({ store })". */
  readonly option: string;
  /** What the store keeps, for the errors: e.g. 'the memory notes'. */
  readonly keeps: string;
  /** The methods an object must have to be taken for the port (checked at boot, before the first call). */
  readonly methods: readonly string[];
  /** The application's TypeORM DataSource, when it has one. */
  readonly dataSource: D | null | undefined;
  readonly typeorm: (dataSource: D) => T;
  /**
   * The in-process store. Absent for a store that commits with the application's own writes (the outbox, the
   * proposals): there 'memory' is refused with `noMemory`, the reason, since it would break that promise.
   */
  readonly memory?: () => T;
  readonly noMemory?: string;
  /** The module's own options exception, for a choice that is none of the three (`problem` does not name the option). */
  readonly invalid: (problem: string) => Error;
}

/** Whether `value` is an object with every one of `methods` as a function of its own or of its prototype chain. */
function isPort(value: unknown, methods: readonly string[]): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}

/** Check a store choice at boot; throws the module's options error for anything but the three choices. */
export function checkStoreChoice<T>(
  spec: Pick<StoreChoiceSpec<T, unknown>, 'choice' | 'option' | 'methods' | 'memory' | 'noMemory' | 'invalid'>,
): void {
  const { choice } = spec;
  if (choice === undefined || choice === 'typeorm') return;
  if (choice === 'memory') {
    if (spec.memory) return;
    throw spec.invalid(`'memory' is not offered here: ${spec.noMemory ?? 'this store has no in-process form'}`);
  }
  if (isPort(choice, spec.methods)) return;
  const offered = spec.memory ? "'typeorm', 'memory' or a store of your own" : "'typeorm' or a store of your own";
  throw spec.invalid(`expected ${offered} (an object with ${spec.methods.join(', ')}), got ${describe(choice)}`);
}

/**
 * The store a module uses, from its `store` option: 'typeorm' (also when absent) on the application's DataSource, or
 * DataSourceMissingException when it has none; 'memory'; or the caller's own store, checked for the port's methods.
 */
export function resolveStoreChoice<T, D>(spec: StoreChoiceSpec<T, D>): T {
  checkStoreChoice(spec);
  const { choice } = spec;
  if (choice === 'memory' && spec.memory) return spec.memory();
  if (choice !== undefined && choice !== 'typeorm') return choice as T;
  if (spec.dataSource === null || spec.dataSource === undefined)
    throw new DataSourceMissingException(spec.option, spec.keeps, spec.memory !== undefined);
  return spec.typeorm(spec.dataSource);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object without those methods';
  return typeof value;
}
