import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOptionalPeer, OptionalPeerUnavailableException, tryLoadOptionalPeer } from '@zmodu/core';
import { simulateMissingPeers } from '@zmodu/guard/testing';

describe('loadOptionalPeer: a feature loads the optional peer it needs when it is configured', () => {
  let dir: string;

  beforeAll(() => {
    // Real packages on disk: one that loads, one whose own dependency is missing (a broken install), one that throws.
    dir = mkdtempSync(join(tmpdir(), 'zmodu-optional-peer-'));
    const pkg = (name: string, code: string) => {
      mkdirSync(join(dir, 'node_modules', name), { recursive: true });
      writeFileSync(join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }));
      writeFileSync(join(dir, 'node_modules', name, 'index.js'), code);
    };
    pkg('zmodu-peer-ok', 'exports.answer = 42;');
    pkg('zmodu-peer-broken', "require('zmodu-peer-dependency-that-is-absent');");
    pkg('zmodu-peer-throws', "throw new Error('this package needs Node 99\\nand more');");
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const at = (name: string) => () => require(join(dir, 'node_modules', name)) as { answer?: number };

  it('returns the package when it is installed', () => {
    expect(loadOptionalPeer('zmodu-peer-ok', 'the answer feature', at('zmodu-peer-ok')).answer).toBe(42);
    expect(tryLoadOptionalPeer('zmodu-peer-ok', 'the answer feature', at('zmodu-peer-ok'))?.answer).toBe(42);
  });

  it('an absent package (a real require that finds nothing) fails naming the feature, the package and the install', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const load = () => require('zmodu-optional-peer-that-is-not-installed') as unknown;
    let thrown: unknown;
    try {
      loadOptionalPeer('zmodu-optional-peer-that-is-not-installed', 'the frobnicator', load, {
        install: 'zmodu-optional-peer-that-is-not-installed@^3',
      });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(OptionalPeerUnavailableException);
    expect((thrown as Error).message).toBe(
      'the frobnicator needs the zmodu-optional-peer-that-is-not-installed package: npm install zmodu-optional-peer-that-is-not-installed@^3',
    );
    expect(thrown).toMatchObject({ packageName: 'zmodu-optional-peer-that-is-not-installed', feature: 'the frobnicator', missing: true });
    expect(tryLoadOptionalPeer('zmodu-optional-peer-that-is-not-installed', 'the frobnicator', load)).toBeUndefined();
  });

  it('an installed package that cannot load is not "missing": the error quotes the failure, and tryLoadOptionalPeer throws it too', () => {
    expect(() => loadOptionalPeer('zmodu-peer-broken', 'the broken feature', at('zmodu-peer-broken'))).toThrow(
      /^the broken feature needs the zmodu-peer-broken package, which is installed but could not be loaded \(Cannot find module 'zmodu-peer-dependency-that-is-absent'.*\): reinstall it \(npm install zmodu-peer-broken\)\.$/,
    );
    expect(() => tryLoadOptionalPeer('zmodu-peer-broken', 'the broken feature', at('zmodu-peer-broken'))).toThrow(
      OptionalPeerUnavailableException,
    );
    let thrown: unknown;
    try {
      tryLoadOptionalPeer('zmodu-peer-throws', 'the picky feature', at('zmodu-peer-throws'), { install: 'zmodu-peer-throws@^1' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ missing: false, packageName: 'zmodu-peer-throws' });
    expect((thrown as Error).message).toBe(
      'the picky feature needs the zmodu-peer-throws package, which is installed but could not be loaded (this package needs Node 99): reinstall it (npm install zmodu-peer-throws@^1).',
    );
  });

  it('simulateMissingPeers makes an installed package absent until it is undone, and leaves the others alone', () => {
    const restore = simulateMissingPeers('zmodu-peer-ok');
    let calls = 0;
    const counted = () => {
      calls++;
      return at('zmodu-peer-ok')();
    };
    try {
      expect(() => loadOptionalPeer('zmodu-peer-ok', 'the answer feature', counted)).toThrow(
        'the answer feature needs the zmodu-peer-ok package: npm install zmodu-peer-ok',
      );
      expect(tryLoadOptionalPeer('zmodu-peer-ok', 'the answer feature', counted)).toBeUndefined();
      expect(calls).toBe(0);
      expect(loadOptionalPeer('another', 'another feature', () => 'loaded')).toBe('loaded');
    } finally {
      restore();
    }
    expect(loadOptionalPeer('zmodu-peer-ok', 'the answer feature', counted).answer).toBe(42);
    expect(calls).toBe(1);
  });
});
