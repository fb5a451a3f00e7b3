import { spawnSync, SpawnSyncReturns } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The packages as a Nest user gets them: build and `npm pack` every library and the CLI, install the
 * tarballs into a fresh application in a temporary folder outside the repository (its own
 * package.json, test/fixtures/packaged-app), compile it with tsc, run it, and run the installed
 * `zmodu` command. npm run test:packages (ZMODU_KEEP_PACKAGED_APP=1 keeps the folder).
 */
const ROOT = join(__dirname, '..');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'packaged-app');
const PACKAGES = ['db', 'guard', 'skills', 'data', 'outbox', 'memory', 'pipeline', 'mcp', 'agent', 'http', 'admin', 'cli'];
const WITH_TESTING = ['agent', 'db', 'guard', 'outbox', 'memory', 'pipeline'];

// The children see no npm_* settings of the `npm run` that started this test (workspaces, prefix, ...).
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const timings: Record<string, number> = {};

function run(step: string, command: string, args: string[], cwd: string, okCodes = [0]): SpawnSyncReturns<string> {
  const started = Date.now();
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 600_000 });
  timings[step] = (timings[step] ?? 0) + Date.now() - started;
  if (result.error) throw result.error;
  if (!okCodes.includes(result.status ?? -1))
    throw new Error(`${step}: ${command} ${args.join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  return result;
}

const lastJsonLine = (stdout: string): unknown => JSON.parse(stdout.trim().split('\n').at(-1) ?? '');

describe('the packages, installed into a Nest application outside the repository', () => {
  let dir: string;
  let packs: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'zmodu-packaged-app-'));
    packs = join(dir, 'packs');
    run('build and pack', process.execPath, [join(ROOT, 'scripts', 'build-packages.js'), '--pack', '--out', packs], ROOT);
    for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.node10.json', 'zmodu.config.json', 'src'])
      cpSync(join(FIXTURE, entry), join(dir, entry), { recursive: true });
    mkdirSync(join(dir, 'data'));
    run('npm install', 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  });

  afterAll(() => {
    process.stdout.write(`packaged-app timings (ms): ${JSON.stringify(timings)}${dir ? ` in ${dir}` : ''}\n`);
    if (dir && process.env.ZMODU_KEEP_PACKAGED_APP !== '1') rmSync(dir, { recursive: true, force: true });
  });

  it('packs each package with its compiled output and declarations only', () => {
    expect(readdirSync(packs).sort()).toEqual(PACKAGES.map((p) => `zmodu-${p}-0.1.0.tgz`).sort());
    for (const name of PACKAGES) {
      const files = run('tar', 'tar', ['-tzf', join(packs, `zmodu-${name}-0.1.0.tgz`)], dir)
        .stdout.trim()
        .split('\n');
      // Besides its compiled code, @zmodu/admin ships the approvals console built (static files, no sources).
      const shipped = (f: string) => f.startsWith('package/dist/') || (name === 'admin' && f.startsWith('package/console-dist/'));
      expect(files.filter((f) => f !== 'package/package.json' && !shipped(f))).toEqual([]);
      if (name === 'admin') expect(files).toContain('package/console-dist/index.html');
      expect(files.filter((f) => /\.spec\.|__fixtures__|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
      expect(files).toContain(name === 'cli' ? 'package/dist/bin.js' : 'package/dist/index.d.ts');
      if (WITH_TESTING.includes(name)) expect(files).toContain('package/dist/testing/index.d.ts');
    }
  });

  it('compiles the application with tsc, under nodenext and node10 module resolution', () => {
    const tsc = join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
    run('tsc', process.execPath, [tsc, '-p', 'tsconfig.json'], dir);
    run('tsc', process.execPath, [tsc, '-p', 'tsconfig.node10.json'], dir);
  });

  it('runs the agent, which calls the skill through the guard, and the audit records both calls', () => {
    const out = lastJsonLine(run('node dist/main.js', process.execPath, ['dist/main.js'], dir).stdout);
    expect(out).toEqual({
      answer: 'ACME is at 101.5.',
      stoppedReason: 'final',
      toolCalls: [
        { name: 'order.submit', decision: 'denied', cause: 'denied_not_listed', outcome: 'denied' },
        { name: 'market.quote', decision: 'allowed', cause: null, outcome: 'ok' },
      ],
      skillCalls: [{ skill: 'market.quote', tenant: 'acme' }],
      audit: [
        { skill: 'market.quote', decision: 'allowed', cause: null, outcome: 'ok', tenantId: 'acme', userId: 'alice' },
        { skill: 'order.submit', decision: 'denied', cause: 'denied_not_listed', outcome: 'denied', tenantId: 'acme', userId: 'alice' },
      ],
      loaded: [
        'AdminModule',
        'BusinessSkillsModule',
        'OutboxModule',
        'PipelineModule',
        'ZmoduHttpModule',
        'ZmoduExceptionFilter',
        'createTestDatabase',
        'auditLogStoreContract',
        'outboxStoreContract',
        'proposalStoreContract',
      ],
    });
  });

  it('runs the installed zmodu command on the same database, through its guard', () => {
    const zmodu = join(dir, 'node_modules', '.bin', 'zmodu');
    const call = (skill: string, args: unknown, okCodes = [0]) =>
      run(
        'zmodu ai call',
        zmodu,
        ['ai', 'call', skill, '--config', 'zmodu.config.json', '--tenant', 'acme', '--user', 'alice', '--args', JSON.stringify(args)],
        dir,
        okCodes,
      );
    const read = call('db.query', { sql: 'SELECT id, body FROM notes ORDER BY id' });
    expect(lastJsonLine(read.stdout)).toMatchObject({ rows: [{ id: 'n1', body: 'ACME is at 101.5.' }] }); // acme's rows only
    const refused = call('entity.list', { entity: 'note' }, [1]);
    expect(lastJsonLine(refused.stdout)).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
  });
});
