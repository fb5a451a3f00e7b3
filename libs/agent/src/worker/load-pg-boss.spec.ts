import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OptionalPeerUnavailableException, setOptionalPeerResolver } from '@zmodu/core';
import { simulateMissingPeers } from '@zmodu/guard/testing';
import { PgBoss } from 'pg-boss';
import { explainLoadError, loadPgBoss } from './load-pg-boss';
import { PgBossGoalQueue } from './pg-boss-goal-queue';
import { PG_BOSS_RANGE } from './pg-boss-peer';

const ROOT = join(__dirname, '..', '..', '..', '..');
const OPTIONS = { connection: {}, schema: 's', name: 'q', pollingIntervalSeconds: 1, notify: false };

/** Optional peers as `found` says, by name ('pg-boss', 'pg-boss/package.json'); a name it lacks is not installed. */
function installed(found: Record<string, () => unknown>): () => void {
  return setOptionalPeerResolver((name) => {
    if (Object.hasOwn(found, name)) return found[name]();
    throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
  });
}

function refusal(): OptionalPeerUnavailableException {
  try {
    loadPgBoss();
  } catch (err) {
    expect(err).toBeInstanceOf(OptionalPeerUnavailableException);
    return err as OptionalPeerUnavailableException;
  }
  throw new Error('expected OptionalPeerUnavailableException');
}

/** Runs __fixtures__/without-pg-boss-child.ts (an app booting where pg-boss cannot be resolved) with a queue driver. */
function boot(driver: 'pg-boss' | 'in-process'): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['-r', join(ROOT, 'scripts', 'register-ts.js'), join(__dirname, '__fixtures__', 'without-pg-boss-child.ts'), driver],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('pg-boss, an optional peer dependency loaded for cluster mode only', () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
  });

  it('is declared as an optional peer of @zmodu/agent, with the range the loader asks for', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as Record<string, never>;
    expect(manifest.peerDependencies['pg-boss']).toBe(PG_BOSS_RANGE);
    expect(manifest.peerDependenciesMeta['pg-boss']).toEqual({ optional: true });
    expect(Object.keys(manifest.dependencies)).not.toContain('pg-boss');
  });

  it('loads the installed pg-boss 12 (an ES module, through require)', () => {
    expect(loadPgBoss()).toBe(PgBoss);
  });

  it('says what to install when pg-boss is not installed (attack: cluster mode configured, the optional peer left out)', () => {
    restore = simulateMissingPeers('pg-boss');
    const e = refusal();
    expect(e.message).toBe("cluster mode (queue.driver 'pg-boss') needs the pg-boss package: npm install pg-boss@^12.38.0");
    expect({ packageName: e.packageName, install: e.install, missing: e.missing }).toEqual({
      packageName: 'pg-boss',
      install: 'pg-boss@^12.38.0',
      missing: true,
    });
    // The same from the queue itself, at its construction (AgentModule builds it at boot).
    expect(() => new PgBossGoalQueue(OPTIONS)).toThrow(e.message);
  });

  it('refuses another major or an older 12, naming the version found', () => {
    restore = installed({ 'pg-boss': () => class PgBoss {}, 'pg-boss/package.json': () => ({ version: '10.4.2' }) });
    const e = refusal();
    expect(e.message).toBe(
      "cluster mode (queue.driver 'pg-boss') needs the pg-boss package, which is installed but could not be loaded " +
        '(pg-boss 10.4.2 is installed, and cluster mode runs on ^12.38.0): reinstall it (npm install pg-boss@^12.38.0).',
    );
    expect(e.missing).toBe(false);
    restore();
    for (const version of ['12.20.0', '13.0.0']) {
      restore = installed({ 'pg-boss': () => ({ PgBoss }), 'pg-boss/package.json': () => ({ version }) });
      expect(refusal().message).toContain(`(pg-boss ${version} is installed`);
      restore();
    }
    // A 12 without the class it exports, or with no readable version: refused too.
    restore = installed({ 'pg-boss': () => ({}), 'pg-boss/package.json': () => ({ version: '12.38.0' }) });
    expect(refusal().message).toContain('(pg-boss 12.38.0 is installed');
    restore();
    restore = installed({ 'pg-boss': () => ({ PgBoss }) });
    expect(refusal().message).toContain('(pg-boss of an unknown version is installed');
    restore();
    restore = installed({ 'pg-boss': () => ({ PgBoss }), 'pg-boss/package.json': () => ({ version: '12.40.1' }) });
    expect(loadPgBoss()).toBe(PgBoss);
  });

  it('says which Node loads it when this one cannot require an ES module', () => {
    const esm = Object.assign(new Error('require() of ES Module .../pg-boss/dist/index.js not supported.'), { code: 'ERR_REQUIRE_ESM' });
    restore = installed({
      'pg-boss': () => {
        throw explainLoadError(esm);
      },
    });
    expect(refusal().message).toMatch(
      /could not be loaded \(pg-boss 12 is an ES module, which Node v[\d.]+ cannot require: run Node >= 22\.12\)/,
    );
    const other = new Error('boom');
    expect(explainLoadError(other)).toBe(other);
  });

  it('names a broken install: one of pg-boss\'s own dependencies missing is not "install pg-boss"', () => {
    restore = installed({
      'pg-boss': () => {
        throw Object.assign(new Error("Cannot find package 'cron-parser' imported from .../pg-boss/dist/timekeeper.js"), {
          code: 'ERR_MODULE_NOT_FOUND',
        });
      },
    });
    const e = refusal();
    expect(e.missing).toBe(false);
    expect(e.message).toBe(
      "cluster mode (queue.driver 'pg-boss') needs the pg-boss package, which is installed but could not be loaded " +
        "(Cannot find package 'cron-parser' imported from .../pg-boss/dist/timekeeper.js): reinstall it (npm install pg-boss@^12.38.0).",
    );
  });

  it('an app booting in cluster mode without pg-boss fails at boot, naming it; in-process never asks for it (a real child process)', async () => {
    const cluster = await boot('pg-boss');
    expect(cluster.out).toContain('ASKED pg-boss');
    expect(cluster.out).toContain(
      "FAILED OptionalPeerUnavailableException: cluster mode (queue.driver 'pg-boss') needs the pg-boss package: npm install pg-boss@^12.38.0",
    );
    const single = await boot('in-process');
    expect(single.out).toContain('BOOTED');
    expect(single.out).not.toContain('ASKED pg-boss');
    expect(single.code).toBe(0);
  }, 60_000);
});
