import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/* eslint-disable @typescript-eslint/no-require-imports -- the scripts are CommonJS, shared with the build and lint */
const ROOT = join(__dirname, '..', '..');
const { buildOrder, libraries, packages } = require('../../scripts/libraries') as {
  packages(): Array<{ dir: string; name: string; short: string; deps: string[]; testing: boolean }>;
  libraries(): Array<{ dir: string; short: string }>;
  buildOrder(list?: Array<{ short: string; name: string; deps: string[] }>): Array<{ short: string }>;
};

describe('one list of the packages (scripts/libraries.js, from the package.json files)', () => {
  it('holds every library and the CLI, and tsconfig.json maps @zmodu/<name> to exactly those libraries', () => {
    expect(packages().map((p) => p.dir)).toEqual(
      expect.arrayContaining(['libs/db', 'libs/guard', 'libs/skills', 'libs/agent', 'apps/cli']),
    );
    const tsconfig = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: { paths: Record<string, string[]> };
    };
    const expected = Object.fromEntries(
      libraries().flatMap((l) => [
        [`@zmodu/${l.short}`, [`${l.dir}/src`]],
        [`@zmodu/${l.short}/*`, [`${l.dir}/src/*`]],
      ]),
    );
    expect(tsconfig.compilerOptions.paths).toEqual(expected);
  });

  it('builds each package after every package it declares, and refuses a cycle or an unknown one', () => {
    const order = buildOrder().map((p) => p.short);
    for (const p of packages())
      for (const d of p.deps) expect([p.short, order.indexOf(d) < order.indexOf(p.short)]).toEqual([p.short, true]);
    expect(() =>
      buildOrder([
        { short: 'a', name: '@zmodu/a', deps: ['b'] },
        { short: 'b', name: '@zmodu/b', deps: ['a'] },
      ]),
    ).toThrow(/in a cycle: @zmodu\/a, @zmodu\/b/);
    expect(() => buildOrder([{ short: 'a', name: '@zmodu/a', deps: ['nope'] }])).toThrow(/declares @zmodu\/nope, which is no package/);
  });
});
