import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * scripts/check-esm-exports.mjs, which scripts/build-packages.js runs on every entry point: a CommonJS export that
 * Node's ESM loader cannot see statically fails it, naming the export; tsc's own output passes.
 */
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'check-esm-exports.mjs');

describe('the ESM exports check of the build', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'zmodu-esm-exports-'));
    const pkg = (name: string, code: string) => {
      mkdirSync(join(dir, 'node_modules', name), { recursive: true });
      writeFileSync(join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }));
      writeFileSync(join(dir, 'node_modules', name, 'index.js'), code);
    };
    // What tsc emits for `export class A {}`, `export { b as c } from './b'` and `export * from './d'`.
    pkg(
      'tsc-style',
      [
        '"use strict";',
        'var __exportStar = (this && this.__exportStar) || function (m, exports) {',
        '  for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p)) exports[p] = m[p];',
        '};',
        'Object.defineProperty(exports, "__esModule", { value: true });',
        'exports.c = exports.A = void 0;',
        'class A {}',
        'exports.A = A;',
        'var b_1 = require("./b");',
        'Object.defineProperty(exports, "c", { enumerable: true, get: function () { return b_1.b; } });',
        '__exportStar(require("./d"), exports);',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'node_modules', 'tsc-style', 'b.js'), 'exports.b = 1;\n');
    writeFileSync(join(dir, 'node_modules', 'tsc-style', 'd.js'), 'exports.d = 2;\n');
    // Exports made at run time: require() gives them, ESM does not see them.
    pkg('runtime-exports', 'exports.seen = 1;\nObject.assign(exports, { hidden: 2 });\n');
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const check = (...specifiers: string[]) => spawnSync(process.execPath, [SCRIPT, ...specifiers], { cwd: dir, encoding: 'utf8' });

  it("passes tsc's CommonJS output: every name is a named export in ESM", () => {
    const run = check('tsc-style');
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('tsc-style: 3 named exports from ESM, 3 from require()\n');
    expect(run.status).toBe(0);
  });

  it('fails on an export assigned at run time, naming it and saying what to do', () => {
    const run = check('tsc-style', 'runtime-exports');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('runtime-exports: ESM cannot see hidden (export each with a plain `export` statement');
    expect(run.stderr).not.toContain('tsc-style:');
  });

  it('fails on an entry point that does not load', () => {
    const run = check('no-such-package');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('no-such-package does not load:');
  });
});
