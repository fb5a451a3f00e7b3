import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PgBoss } from 'pg-boss';
import { PgBossRequiredException } from '../exceptions/pg-boss-required.exception';
import { loadPgBoss } from './load-pg-boss';
import { PackageResolver, PG_BOSS_RANGE } from './pg-boss-peer';
import { PgBossGoalQueue } from './pg-boss-goal-queue';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** A resolver that answers as Node does for a package that is not installed. */
const notInstalled: PackageResolver = (name) => {
  throw Object.assign(new Error(`Cannot find module '${name}'\nRequire stack:\n- ${__filename}`), { code: 'MODULE_NOT_FOUND' });
};

/** A resolver that finds `modules` (by name) and nothing else. */
const installed =
  (modules: Record<string, unknown>): PackageResolver =>
  (name) => {
    if (Object.hasOwn(modules, name)) return modules[name];
    return notInstalled(name);
  };

function refusal(resolve: PackageResolver): PgBossRequiredException {
  try {
    loadPgBoss(resolve);
  } catch (err) {
    expect(err).toBeInstanceOf(PgBossRequiredException);
    return err as PgBossRequiredException;
  }
  throw new Error('expected PgBossRequiredException');
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
    const e = refusal(notInstalled);
    expect(e.message).toBe(
      "Cluster mode (queue.driver 'pg-boss') needs pg-boss, an optional peer dependency of @zmodu/agent that is not installed: " +
        'npm install pg-boss@^12.38.0 (or use the default in-process queue).',
    );
    expect({ range: e.range, found: e.found, name: e.name }).toEqual({ range: '^12.38.0', found: null, name: 'PgBossRequiredException' });
    // The same from the queue itself, at its construction (AgentModule builds it at boot).
    const options = { connection: {}, schema: 's', name: 'q', pollingIntervalSeconds: 1, notify: false };
    expect(() => new PgBossGoalQueue(options, notInstalled)).toThrow(PgBossRequiredException);
  });

  it('refuses another major or an older 12, naming the version found', () => {
    const pgBoss10 = class PgBoss {};
    const e = refusal(installed({ 'pg-boss': pgBoss10, 'pg-boss/package.json': { version: '10.4.2' } }));
    expect(e.message).toBe(
      "Cluster mode (queue.driver 'pg-boss') needs pg-boss ^12.38.0, and pg-boss 10.4.2 is installed: npm install pg-boss@^12.38.0.",
    );
    expect(e.found).toBe('10.4.2');
    expect(refusal(installed({ 'pg-boss': { PgBoss }, 'pg-boss/package.json': { version: '12.20.0' } })).found).toBe('12.20.0');
    expect(refusal(installed({ 'pg-boss': { PgBoss }, 'pg-boss/package.json': { version: '13.0.0' } })).found).toBe('13.0.0');
    // A 12 without the class it exports, or with no readable version: refused too.
    expect(refusal(installed({ 'pg-boss': {}, 'pg-boss/package.json': { version: '12.38.0' } })).message).toMatch(
      /pg-boss 12\.38\.0 is installed/,
    );
    expect(refusal(installed({ 'pg-boss': { PgBoss } })).message).toMatch(/pg-boss of an unknown version is installed/);
    expect(loadPgBoss(installed({ 'pg-boss': { PgBoss }, 'pg-boss/package.json': { version: '12.40.1' } }))).toBe(PgBoss);
  });

  it('says which Node loads it when this one cannot require an ES module, and names a broken install', () => {
    const esm: PackageResolver = (name) => {
      if (name === 'pg-boss/package.json') return { version: '12.38.0' };
      throw Object.assign(new Error('require() of ES Module .../pg-boss/dist/index.js not supported.'), { code: 'ERR_REQUIRE_ESM' });
    };
    const e = refusal(esm);
    expect(e.message).toMatch(/an ES module this Node \(v[\d.]+\) cannot load from CommonJS: run Node >= 22\.12/);
    expect(e.found).toBe('12.38.0');
    // pg-boss is there, one of its own dependencies is not: not "install pg-boss", but what failed, and reinstall.
    const broken: PackageResolver = (name) => {
      if (name === 'pg-boss/package.json') return { version: '12.38.0' };
      throw Object.assign(new Error("Cannot find package 'cron-parser' imported from .../pg-boss/dist/timekeeper.js"), {
        code: 'ERR_MODULE_NOT_FOUND',
      });
    };
    expect(refusal(broken).message).toBe(
      "Cluster mode (queue.driver 'pg-boss') could not load pg-boss (Cannot find package 'cron-parser' imported from .../pg-boss/dist/timekeeper.js): " +
        'reinstall it with npm install pg-boss@^12.38.0.',
    );
  });

  it('an app booting in cluster mode without pg-boss fails at boot with PgBossRequiredException; in-process never asks for it (a real child process)', async () => {
    const cluster = await boot('pg-boss');
    expect(cluster.out).toContain('ASKED pg-boss');
    expect(cluster.out).toContain(
      "FAILED PgBossRequiredException: Cluster mode (queue.driver 'pg-boss') needs pg-boss, an optional peer dependency of @zmodu/agent that is not installed: npm install pg-boss@^12.38.0",
    );
    const single = await boot('in-process');
    expect(single.out).toContain('BOOTED');
    expect(single.out).not.toContain('ASKED pg-boss');
    expect(single.code).toBe(0);
  }, 60_000);
});
