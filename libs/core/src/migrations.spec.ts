import { registerMigrations, zmoduMigrations } from './migrations';

class First1700000000000 {
  name = 'First1700000000000';
}
class Second1700000000001 {
  name = 'Second1700000000001';
}
class Third1700000000002 {
  name = 'Third1700000000002';
}
class AppTable1690000000000 {
  name = 'AppTable1690000000000';
}
/** A class whose name was mangled by a bundler: TypeORM, and zmoduMigrations, go by its `name` field. */
const Mangled = class {
  name = 'Fourth1700000000003';
};

describe('zmoduMigrations', () => {
  // The registry is one per process (on globalThis, for every copy of @zmodu/core): each test starts from none.
  beforeEach(() => {
    delete (globalThis as Record<symbol, unknown>)[Symbol.for('zmodu.migrations')];
  });

  it('lists every registered package, then yours, in timestamp order, each migration once', () => {
    expect(zmoduMigrations()).toEqual([]);
    const list = registerMigrations('@zmodu/one', [Third1700000000002, First1700000000000] as const);
    expect(list).toEqual([Third1700000000002, First1700000000000]);
    registerMigrations('@zmodu/two', [Second1700000000001, Mangled]);
    // A second copy of a package (another version in node_modules) adds nothing.
    registerMigrations('@zmodu/one', [class Other1800000000000 {}]);
    expect(zmoduMigrations()).toEqual([First1700000000000, Second1700000000001, Third1700000000002, Mangled]);
    expect(zmoduMigrations(AppTable1690000000000)).toEqual([
      AppTable1690000000000,
      First1700000000000,
      Second1700000000001,
      Third1700000000002,
      Mangled,
    ]);
  });

  it('takes lists and repeats without making duplicates (TypeORM refuses those), and passes globs on', () => {
    registerMigrations('@zmodu/one', [First1700000000000]);
    const out = zmoduMigrations([First1700000000000, [AppTable1690000000000]], AppTable1690000000000, 'dist/migrations/*.js');
    expect(out).toEqual([AppTable1690000000000, First1700000000000, 'dist/migrations/*.js']);
    const names = out.map((m) => (typeof m === 'string' ? m : m.name));
    expect(new Set(names).size).toBe(names.length);
  });

  it('refuses what is not a migration class with a timestamp, saying what it got', () => {
    class NoStamp {}
    expect(() => zmoduMigrations(NoStamp)).toThrow(/'NoStamp' is not a TypeORM migration class .*13-digit timestamp/);
    expect(() => zmoduMigrations(undefined as never)).toThrow(/undefined \(an import that is not there\?\) is not a TypeORM migration/);
    expect(() => zmoduMigrations({ name: 'Obj1700000000000' } as never)).toThrow(/an object is not a TypeORM migration class/);
    expect(() => zmoduMigrations(42 as never)).toThrow(/number is not/);
  });
});
