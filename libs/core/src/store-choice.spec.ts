import { DataSourceMissingException } from './exceptions/data-source-missing.exception';
import { checkStoreChoice, resolveStoreChoice, StoreChoiceSpec } from './store-choice';
import { ZmoduError } from './zmodu-error';

class OptionsError extends Error {}

interface Box {
  get(): string;
  put(v: string): void;
}
const box = (label: string): Box => ({ get: () => label, put: () => undefined });

function spec(choice: unknown, extra: Partial<StoreChoiceSpec<Box, { db: string }>> = {}): StoreChoiceSpec<Box, { db: string }> {
  return {
    choice,
    option: 'BoxModule.forRoot({ store })',
    keeps: 'the boxes',
    methods: ['get', 'put'],
    dataSource: { db: 'main' },
    typeorm: (ds) => box(`typeorm:${ds.db}`),
    memory: () => box('memory'),
    invalid: (problem) => new OptionsError(`store: ${problem}`),
    ...extra,
  };
}

describe('resolveStoreChoice', () => {
  it("answers 'typeorm' (also when absent) on the DataSource, 'memory' in process, and a store of yours as given", () => {
    expect(resolveStoreChoice(spec(undefined)).get()).toBe('typeorm:main');
    expect(resolveStoreChoice(spec('typeorm')).get()).toBe('typeorm:main');
    expect(resolveStoreChoice(spec('memory')).get()).toBe('memory');
    const mine = box('mine');
    expect(resolveStoreChoice(spec(mine))).toBe(mine);
    class ClassStore {
      get(): string {
        return 'class';
      }
      put(): void {}
    }
    // Methods on the prototype count: a class instance is a store.
    expect(resolveStoreChoice(spec(new ClassStore())).get()).toBe('class');
  });

  it("throws the one DataSourceMissingException for 'typeorm' without a DataSource, naming the option and what to do", () => {
    for (const dataSource of [undefined, null]) {
      let thrown: unknown;
      try {
        resolveStoreChoice(spec('typeorm', { dataSource }));
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(DataSourceMissingException);
      expect(thrown).toBeInstanceOf(ZmoduError);
      const e = thrown as DataSourceMissingException;
      expect(e.code).toBe('DataSourceMissingException');
      expect(e.option).toBe('BoxModule.forRoot({ store })');
      expect(e.message).toMatch(/BoxModule\.forRoot\(\{ store \}\) is 'typeorm' \(the default\), which keeps the boxes/);
      expect(e.message).toMatch(/migrations: zmoduMigrations\(\)/);
      expect(e.message).toMatch(/or set it to 'memory' \(lost at restart\), or to a store of your own\.$/);
    }
    // 'memory' and a store of yours need no DataSource.
    expect(resolveStoreChoice(spec('memory', { dataSource: undefined })).get()).toBe('memory');
  });

  it("refuses 'memory' where a store has no in-process form, saying why, and does not offer it in the DataSource error", () => {
    const noMemory = { memory: undefined, noMemory: 'its writes commit with yours' };
    expect(() => resolveStoreChoice(spec('memory', noMemory))).toThrow(OptionsError);
    expect(() => resolveStoreChoice(spec('memory', noMemory))).toThrow(/store: 'memory' is not offered here: its writes commit with yours/);
    expect(() => resolveStoreChoice(spec(undefined, { ...noMemory, dataSource: null }))).toThrow(/or set it to a store of your own\.$/);
    expect(() => checkStoreChoice(spec('nope', noMemory))).toThrow(/expected 'typeorm' or a store of your own/);
  });

  it("refuses anything else with the module's own options error, naming the methods a store needs", () => {
    const cases: Array<[unknown, RegExp]> = [
      ['redis', /got "redis"/],
      ['x'.repeat(100), /got "x{40}…"/],
      [{ get: () => 'only get' }, /an object with get, put\), got an object without those methods/],
      [[], /got an array/],
      [null, /got null/],
      [42, /got number/],
      [() => box('fn'), /got function/],
      [JSON.parse('{"__proto__": {"get": 1, "put": 2}}'), /got an object without those methods/],
    ];
    for (const [choice, message] of cases) {
      expect(() => resolveStoreChoice(spec(choice))).toThrow(OptionsError);
      expect(() => resolveStoreChoice(spec(choice))).toThrow(message);
      expect(() => checkStoreChoice(spec(choice))).toThrow(message);
    }
    expect(() => checkStoreChoice(spec('memory'))).not.toThrow();
    expect(() => checkStoreChoice(spec(undefined))).not.toThrow();
  });
});
