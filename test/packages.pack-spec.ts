import { ChildProcess, spawn, spawnSync, SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The packages as Nest users get them: build and `npm pack` every library and the CLI, then install the tarballs into
 * four applications in a temporary folder outside the repository (examples/approvals, examples/minimal, examples/mcp
 * and test/fixtures/apps/nest11-cjs, each with its own package.json):
 *
 * - nest12-esm: what `nest new` (CLI 12) makes today, ESM ("type": "module"), TypeScript 6, Vitest 4, module nodenext;
 * - nest11-cjs: what `nest new` (CLI 11) made, CommonJS, jest and ts-jest;
 * - minimal: @zmodu/agent, guard, skills and db with Nest's core and TypeORM only (its size is reported);
 * - mcp: the minimal four with @zmodu/mcp and both MCP SDKs: an external MCP server's tool behind the guard, and the
 *   app's skill served over MCP to the official v2 client.
 *
 * Each installs without --legacy-peer-deps and without a peer warning. The two Nest apps boot an agent with a skill of
 * their own, the data skills over an entity of their own on the embedded database, the pipeline with a proposal that
 * needs a human, and the admin controller; their own tests (npm test) run an agent and approve over HTTP, and so does
 * this spec against each built and started app. All of it on every Node version of NODE_MATRIX (default 22,24,26;
 * a missing one is installed as `npm install --prefix ~/.node<N> node@<N>`), on the node_modules installed once.
 * npm run test:packages; ZMODU_KEEP_PACKAGED_APP=1 keeps the folder; the sizes go to dist/packages-report.json.
 */
const ROOT = join(__dirname, '..');
/** Where each app is kept: the examples a user reads (examples/), and the Nest 11 CommonJS fixture. */
const SOURCES = {
  'nest12-esm': join(ROOT, 'examples', 'approvals'),
  'nest11-cjs': join(ROOT, 'test', 'fixtures', 'apps', 'nest11-cjs'),
  minimal: join(ROOT, 'examples', 'minimal'),
  mcp: join(ROOT, 'examples', 'mcp'),
} as const;
const REPORT = join(ROOT, 'dist', 'packages-report.json');
// Every package of the repository, and those with a /testing entry (scripts/libraries.js: one list).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { packages } = require('../scripts/libraries') as { packages(): Array<{ short: string; testing: boolean }> };
const PACKAGES = packages().map((p) => p.short);
const WITH_TESTING = packages()
  .filter((p) => p.testing)
  .map((p) => p.short);
const APPS = ['nest12-esm', 'nest11-cjs', 'minimal', 'mcp'] as const;
type App = (typeof APPS)[number];
const NEST_APPS = ['nest12-esm', 'nest11-cjs'] as const;
type NestApp = (typeof NEST_APPS)[number];
const MINIMAL_TARGET_MIB = 60;

const NODE_MATRIX = (process.env.NODE_MATRIX ?? '22,24,26')
  .split(',')
  .map((v) => v.trim())
  .filter(Boolean);
for (const v of NODE_MATRIX)
  if (!/^\d{2}$/.test(v)) throw new Error(`NODE_MATRIX must list Node major versions, such as 22,24,26: ${JSON.stringify(v)} is not one`);

// The children see no npm_* settings of the `npm run` that started this test (workspaces, prefix, legacy-peer-deps...).
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))) as NodeJS.ProcessEnv;
const timings: Record<string, number> = {};

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  okCodes?: number[];
  timeout?: number;
}

function run(step: string, command: string, args: string[], cwd: string, options: RunOptions = {}): SpawnSyncReturns<string> {
  const started = Date.now();
  const result = spawnSync(command, args, {
    cwd,
    env: options.env ?? baseEnv,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: options.timeout ?? 600_000,
  });
  timings[step] = (timings[step] ?? 0) + Date.now() - started;
  if (result.error) throw result.error;
  if (!(options.okCodes ?? [0]).includes(result.status ?? -1))
    throw new Error(`${step}: ${command} ${args.join(' ')} in ${cwd} exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  return result;
}

interface Ran {
  stdout: string;
  stderr: string;
}

/** The same, without blocking the event loop (the installs, and the apps of one Node version, run side by side). */
function runAsync(step: string, command: string, args: string[], cwd: string, options: RunOptions = {}): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: options.env ?? baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeout ?? 600_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      timings[step] = (timings[step] ?? 0) + Date.now() - started;
      if ((options.okCodes ?? [0]).includes(code ?? -1)) resolve({ stdout, stderr });
      else reject(new Error(`${step}: ${command} ${args.join(' ')} in ${cwd} exited ${code ?? signal}\n${stdout}\n${stderr}`));
    });
  });
}

const lastJsonLine = (stdout: string): unknown => JSON.parse(stdout.trim().split('\n').at(-1) ?? '');

/**
 * The folder of Node `major`'s binary: this process's own, or $HOME/.node<major>/node_modules/.bin, installed there from
 * the registry's `node` package when missing (as on a clean CI machine).
 */
function nodeBinDir(major: string): string {
  if (process.versions.node.split('.')[0] === major) return dirname(process.execPath);
  const prefix = join(homedir(), `.node${major}`);
  const bin = join(prefix, 'node_modules', '.bin');
  if (!existsSync(join(bin, 'node')))
    run(
      `install node ${major}`,
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `node@${major}`],
      ROOT,
    );
  const version = run(`node ${major} -v`, join(bin, 'node'), ['-v'], ROOT).stdout.trim();
  if (!version.startsWith(`v${major}.`)) throw new Error(`${join(bin, 'node')} is ${version}, not Node ${major}`);
  return bin;
}

/** The environment a command runs in on Node `major`: its node first on PATH (npm, vitest and jest run on it). */
const envOn = (binDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...baseEnv,
  PATH: `${binDir}:${baseEnv.PATH ?? ''}`,
  ...extra,
});

/** npm's lines about peer dependencies: an ERESOLVE (a conflict npm overrode or refused) or a peer warning. */
const peerComplaints = (output: string): string[] =>
  output
    .split('\n')
    .filter((line) => /ERESOLVE|legacy-peer-deps|\bpeer\b|peerDependenc/i.test(line) && /^npm (warn|error|ERR)/i.test(line));

interface Started {
  child: ChildProcess;
  url: string;
  node: string;
  output: () => string;
}

/** Start a built app as its `start:prod` script does (`node dist/main`) on a free loopback port; resolves once it listens. */
function startApp(appDir: string, binDir: string, dataDir: string): Promise<Started> {
  const scripts = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8')).scripts as Record<string, string>;
  expect(scripts['start:prod']).toBe('node dist/main');
  const child = spawn(join(binDir, 'node'), ['dist/main'], {
    cwd: appDir,
    env: envOn(binDir, { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${appDir} did not listen within 120 s:\n${output}`));
    }, 120_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${appDir} exited (${code ?? signal}) before it listened:\n${output}`));
    });
    const onData = (d: Buffer) => {
      output += d;
      const line = output.split('\n').find((l) => l.startsWith('{"listening"'));
      if (!line) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      const { listening, node } = JSON.parse(line) as { listening: string; node: string };
      resolve({ child, url: listening, node, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (output += d));
  });
}

/** SIGTERM, then wait (bounded) for the exit: Nest's shutdown hooks close the app and its database. */
function stopApp(started: Started): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { child } = started;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      started.child.kill('SIGKILL');
      reject(new Error(`the app did not exit within 30 s of SIGTERM:\n${started.output()}`));
    }, 30_000);
    started.child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
    started.child.kill('SIGTERM');
  });
}

/**
 * What a user does with the started app, over HTTP: run the desk agent (it proposes a refund that waits for a human),
 * find the proposal in the admin approval queue as an approver of the tenant, approve it, see it executed.
 */
async function agentRunApprovedOverHttp(url: string): Promise<void> {
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const runs = await call('POST', '/desk/runs', 'alice-token');
  expect(runs).toMatchObject({
    status: 201,
    body: {
      stoppedReason: 'final',
      toolCalls: [
        { name: 'entity.list', outcome: 'ok' },
        { name: 'refund.quote', outcome: 'ok' },
        { name: 'approval.submit', outcome: 'ok' },
      ],
      pendingApprovals: [{ skill: 'approval.submit', verdict: 'execute_not_permitted' }],
    },
  });
  const id = (runs.body.pendingApprovals as { proposalId: string }[])[0].proposalId;
  expect((await call('GET', '/admin/approvals?status=pending', 'alice-token')).status).toBe(403); // not an approver
  expect((await call('GET', `/admin/approvals/${id}`, 'gil-token')).status).toBe(404); // another tenant's
  const pending = await call('GET', '/admin/approvals?status=pending', 'lee-token');
  expect(pending).toMatchObject({ status: 200, body: { total: 1, items: [{ id, action: 'refund.issue', amount: 40 }] } });
  const proposal = await call('GET', `/admin/approvals/${id}`, 'lee-token');
  expect(proposal).toMatchObject({ status: 200, body: { status: 'pending', payload: { ticketId: 't-100' }, waitingStep: { index: 0 } } });
  const approved = await call('POST', `/admin/approvals/${id}/approve`, 'lee-token', {
    reason: 'parcel lost in transit',
    version: proposal.body.version,
    step: 0,
  });
  expect(approved).toMatchObject({ status: 200, body: { verdict: 'executed', result: { ticketId: 't-100', status: 'refunded' } } });
  const again = await call('POST', `/admin/approvals/${id}/approve`, 'lee-token', {
    reason: 'twice',
    version: proposal.body.version,
    step: 0,
  });
  expect(again.status).toBe(409); // decided: it executes once
}

describe('the packages, installed into Nest applications outside the repository', () => {
  let dir: string;
  let packs: string;
  const appDir = (app: App) => join(dir, app);
  const installOutput = new Map<App, string>();
  const nodeBins = new Map<string, string>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'zmodu-packaged-apps-'));
    packs = join(dir, 'packs');
    run('build and pack', process.execPath, [join(ROOT, 'scripts', 'build-packages.js'), '--pack', '--out', packs], ROOT);
    for (const app of APPS)
      cpSync(SOURCES[app], appDir(app), {
        recursive: true,
        filter: (src) => !/[/\\](node_modules|dist|data[^/\\]*)$/.test(src),
      });
    shareExampleSources(SOURCES['nest12-esm'], appDir('nest11-cjs'));
    // One install per app, side by side (mostly waiting on the registry and the disk), from npm's cache when it can.
    // npm's own log level (warn): its peer warnings are read below.
    const installs = APPS.map((app) =>
      runAsync(
        `npm install ${app}`,
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', '--legacy-peer-deps=false', '--loglevel=warn'],
        appDir(app),
      ).then(({ stdout, stderr }) => installOutput.set(app, `${stdout}\n${stderr}`)),
    );
    await Promise.all(installs);
    for (const v of NODE_MATRIX) nodeBins.set(v, nodeBinDir(v));
  }, 900_000);

  afterAll(() => {
    const report = dir && existsSync(join(dir, 'minimal', 'node_modules')) ? sizes() : null;
    if (report) {
      mkdirSync(dirname(REPORT), { recursive: true });
      const npm = run('npm --version', 'npm', ['--version'], dir).stdout.trim();
      const measured = { date: new Date().toISOString().slice(0, 10), node: process.version, npm };
      writeFileSync(REPORT, `${JSON.stringify({ ...measured, nodeMatrix: NODE_MATRIX, ...report, timingsMs: timings }, null, 2)}\n`);
      const line = (app: App) => `${app} ${report.apps[app].mib} MiB in ${report.apps[app].packages} packages`;
      process.stdout.write(
        `installed sizes: ${APPS.map(line).join('; ')} (the minimal app's target: at most ${MINIMAL_TARGET_MIB} MiB; ${REPORT})\n`,
      );
    }
    process.stdout.write(`packaged apps timings (ms): ${JSON.stringify(timings)}${dir ? ` in ${dir}` : ''}\n`);
    if (dir && process.env.ZMODU_KEEP_PACKAGED_APP !== '1') rmSync(dir, { recursive: true, force: true });
  });

  /** `du -sb node_modules` and the packages npm installed (its node_modules/.package-lock.json), per app. */
  function sizes() {
    const apps = Object.fromEntries(
      APPS.map((app) => {
        const bytes = Number(run('du', 'du', ['-sb', 'node_modules'], appDir(app)).stdout.split('\t')[0]);
        const lock = JSON.parse(readFileSync(join(appDir(app), 'node_modules', '.package-lock.json'), 'utf8')) as {
          packages: Record<string, unknown>;
        };
        const packages = Object.keys(lock.packages).filter((k) => k.startsWith('node_modules/')).length;
        return [app, { bytes, mib: Math.round((bytes / 2 ** 20) * 10) / 10, packages }];
      }),
    ) as Record<App, { bytes: number; mib: number; packages: number }>;
    return { minimalTargetMiB: MINIMAL_TARGET_MIB, apps };
  }

  it('packs each package with its compiled output, declarations and README only', () => {
    expect(readdirSync(packs).sort()).toEqual(PACKAGES.map((p) => `zmodu-${p}-0.1.0.tgz`).sort());
    for (const name of PACKAGES) {
      const files = run('tar', 'tar', ['-tzf', join(packs, `zmodu-${name}-0.1.0.tgz`)], dir)
        .stdout.trim()
        .split('\n');
      // Besides its compiled code, @zmodu/admin ships the approvals console built (static files, no sources).
      const shipped = (f: string) => f.startsWith('package/dist/') || (name === 'admin' && f.startsWith('package/console-dist/'));
      expect(files.filter((f) => f !== 'package/package.json' && f !== 'package/README.md' && !shipped(f))).toEqual([]);
      // Its README (install line, module snippet, its page of the docs): npm ships it whatever "files" says.
      expect(files).toContain('package/README.md');
      if (name === 'admin') expect(files).toContain('package/console-dist/index.html');
      expect(files.filter((f) => /\.spec\.|__fixtures__|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
      expect(files).toContain(name === 'cli' ? 'package/dist/bin.js' : 'package/dist/index.d.ts');
      if (WITH_TESTING.includes(name)) expect(files).toContain('package/dist/testing/index.d.ts');
    }
  });

  it.each(APPS)('installs %s from the tarballs with no peer dependency conflict or warning, one copy of each package', (app) => {
    expect(peerComplaints(installOutput.get(app) ?? '')).toEqual([]);
    const lock = JSON.parse(readFileSync(join(appDir(app), 'node_modules', '.package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; resolved?: string }>;
    };
    const ours = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/@zmodu\/[^/]+$/.test(path));
    // Each @zmodu package once, at the top, from its tarball; Nest once (a second @nestjs/core would be a second injector).
    for (const [path, entry] of ours) {
      expect(path).toMatch(/^node_modules\/@zmodu\/[a-z]+$/);
      expect(entry.version).toBe('0.1.0');
    }
    expect(Object.keys(lock.packages).filter((p) => p.endsWith('node_modules/@nestjs/core'))).toEqual(['node_modules/@nestjs/core']);
    const nest = lock.packages['node_modules/@nestjs/core'].version ?? '';
    expect(nest.split('.')[0]).toBe(app === 'nest11-cjs' ? '11' : '12');
  });

  it('compiles the ESM app with tsc --module nodenext (its tsconfig.json, its tests included): no errors', () => {
    const tsconfig = JSON.parse(readFileSync(join(appDir('nest12-esm'), 'tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions).toMatchObject({ module: 'nodenext', moduleResolution: 'nodenext' });
    const tsc = join(appDir('nest12-esm'), 'node_modules', 'typescript', 'bin', 'tsc');
    expect(run('tsc --version', process.execPath, [tsc, '--version'], dir).stdout).toMatch(/^Version 6\./);
    run('tsc esm', process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], appDir('nest12-esm'));
  });

  it('compiles the CommonJS app with tsc, under its nodenext tsconfig and under module commonjs (node10 resolution)', () => {
    const tsc = join(appDir('nest11-cjs'), 'node_modules', 'typescript', 'bin', 'tsc');
    run('tsc cjs', process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], appDir('nest11-cjs'));
    run('tsc cjs', process.execPath, [tsc, '-p', 'tsconfig.node10.json'], appDir('nest11-cjs'));
  });

  describe.each(NODE_MATRIX)('on Node %s', (major) => {
    const bin = () => nodeBins.get(major) ?? '';
    const on = (step: string) => `${step} (node ${major})`;
    const versionPattern = new RegExp(`^v${major}\\.`);
    // The apps of one Node version run side by side, each in its own folder, on its own port and database (on 2 cores,
    // one app's install, compile or boot waits on the disk or the loader as often as on the CPU). Each lane is a chain of
    // steps started in beforeAll; the tests below each wait for theirs.
    const lanes = new Map<string, Promise<unknown>>();
    const lane = (name: string, work: Promise<unknown>) => {
      work.catch(() => undefined); // awaited (and reported) by its test
      lanes.set(name, work);
    };

    /** The app's own tests on this Node: `npm test` (vitest in the ESM app, jest in the CommonJS one), then test:e2e. */
    async function ownTests(app: NestApp): Promise<void> {
      const env = envOn(bin(), { CI: 'true', NO_COLOR: '1', FORCE_COLOR: undefined });
      const unit = await runAsync(on(`${app} npm test`), 'npm', ['test'], appDir(app), { env });
      const output = `${unit.stdout}\n${unit.stderr}`;
      // Its specs ran: the desk's (an agent run approved over HTTP; in the CommonJS app also its agent job in the
      // SchedulerRegistry of @nestjs/schedule 6), the template's, and the CommonJS app's entry points.
      if (app === 'nest12-esm') expect(output).toMatch(/Tests\s+2 passed \(2\)/);
      else expect(output).toMatch(/Tests:\s+4 passed, 4 total/);
      expect(output).toContain('desk.spec.ts');
      const e2e = await runAsync(on(`${app} npm run test:e2e`), 'npm', ['run', 'test:e2e'], appDir(app), { env });
      expect(`${e2e.stdout}\n${e2e.stderr}`).toMatch(app === 'nest12-esm' ? /Tests\s+1 passed \(1\)/ : /Tests:\s+1 passed, 1 total/);
    }

    /** `npm run build` (nest build), then the built app started, used over HTTP and stopped. */
    async function buildAndStart(app: NestApp): Promise<void> {
      await runAsync(on(`${app} npm run build`), 'npm', ['run', 'build'], appDir(app), { env: envOn(bin()) });
      // The first Node of the matrix leaves the ESM app's database in `data` for the zmodu command (below).
      const dataDir = major === NODE_MATRIX[0] ? 'data' : `data-node${major}`;
      const started = Date.now();
      const server = await startApp(appDir(app), bin(), dataDir);
      try {
        expect(server.node).toMatch(versionPattern);
        expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        await agentRunApprovedOverHttp(server.url);
      } finally {
        const exit = await stopApp(server);
        timings[on(`${app} start and approve`)] = Date.now() - started;
        // Stopped by the signal (Nest's shutdown hooks re-raise it once the app closed), not by a crash.
        expect([exit.code, exit.signal]).toEqual([null, 'SIGTERM']);
      }
      // The embedded database was closed: its folder lock is gone.
      expect(existsSync(join(appDir(app), `${dataDir}.lock`))).toBe(false);
    }

    beforeAll(() => {
      lane('npm', runAsync(on('npm exec'), 'npm', ['exec', '-c', 'node -p process.version'], appDir('nest12-esm'), { env: envOn(bin()) }));
      const esmCheck = runAsync(on('esm exports'), join(bin(), 'node'), ['check/esm-exports.mjs'], appDir('nest12-esm'), {
        env: envOn(bin()),
      });
      lane('esm exports', esmCheck);
      for (const app of NEST_APPS) {
        const tests = ownTests(app);
        lane(`${app} tests`, tests);
        lane(
          `${app} start`,
          tests.catch(() => undefined).then(() => buildAndStart(app)),
        );
      }
      lane('minimal', runAsync(on('minimal start'), join(bin(), 'node'), ['main.mjs'], appDir('minimal'), { env: envOn(bin()) }));
      lane('mcp', runAsync(on('mcp start'), join(bin(), 'node'), ['main.mjs'], appDir('mcp'), { env: envOn(bin()) }));
    });

    // Nothing of this Node version is left running when the next one starts (or when the folder is removed).
    afterAll(() => Promise.allSettled(lanes.values()), 600_000);

    it('runs npm and the apps on that Node', async () => {
      const { stdout } = (await lanes.get('npm')) as Ran;
      expect(stdout.trim()).toMatch(versionPattern);
    });

    it('imports every public entry of every package by name from ESM, the same objects require() gives', async () => {
      const { stdout } = (await lanes.get('esm exports')) as Ran;
      const report = lastJsonLine(stdout) as { node: string; counts: Record<string, number>; problems: string[] };
      expect(report.problems).toEqual([]);
      expect(report.node).toMatch(versionPattern);
      // Every public entry (@zmodu/core is internal: its ZmoduError is checked as every package's re-export).
      const entries = [...PACKAGES.filter((p) => p !== 'cli' && p !== 'core'), ...WITH_TESTING.map((p) => `${p}/testing`)];
      expect(Object.keys(report.counts).sort()).toEqual(entries.map((e) => `@zmodu/${e}`).sort());
    });

    it.each(NEST_APPS)('%s: its own tests pass (npm test, then npm run test:e2e)', (app) => lanes.get(`${app} tests`));

    it.each(NEST_APPS)('%s: builds (npm run build) and starts; an agent run is approved over HTTP', (app) => lanes.get(`${app} start`));

    it('minimal: boots and runs an agent, whose skill call is audited in the embedded database', async () => {
      const { stdout } = (await lanes.get('minimal')) as Ran;
      expect(lastJsonLine(stdout)).toEqual({
        node: expect.stringMatching(versionPattern),
        answer: "It is 9 o'clock.",
        stoppedReason: 'final',
        toolCalls: ['clock.now allowed ok'],
        audit: ['acme ada clock.now allowed ok'],
      });
    });

    it("mcp: an agent calls an external MCP server's tool through the guard, and the v2 client calls the app's skill over MCP", async () => {
      const { stdout } = (await lanes.get('mcp')) as Ran;
      expect(lastJsonLine(stdout)).toEqual({
        answer: 'Weather in Paris: {"city":"Paris","tempC":19}',
        agentCalls: ['weather.get_weather allowed', 'weather.send_alert denied denied_not_listed'],
        mcpTools: ['clock.now'],
        mcpCall: { zone: 'Europe/Paris', hour: 9 },
        audit: ['clock.now allowed ok', 'weather.get_weather allowed ok', 'weather.send_alert denied denied'],
      });
    });
  });

  it('runs the installed zmodu command on the database the ESM app left, through its guard', () => {
    const app = appDir('nest12-esm');
    const zmodu = join(app, 'node_modules', '.bin', 'zmodu');
    const call = (skill: string, args: unknown, okCodes = [0]) =>
      run(
        'zmodu ai call',
        zmodu,
        ['ai', 'call', skill, '--config', 'zmodu.config.json', '--tenant', 'acme', '--user', 'alice', '--args', JSON.stringify(args)],
        app,
        { okCodes },
      );
    // acme's tickets only, t-100 refunded by the approval over HTTP.
    const read = call('db.query', { sql: 'SELECT id, status FROM desk_tickets ORDER BY id' });
    expect(lastJsonLine(read.stdout)).toMatchObject({
      rows: [
        { id: 't-100', status: 'refunded' },
        { id: 't-101', status: 'open' },
      ],
    });
    const refused = call('entity.list', { entity: 'ticket' }, [1]);
    expect(lastJsonLine(refused.stdout)).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    // --app: the built application itself (ESM), booted without HTTP on the same database: its own skills and its agent's
    // policy, which lists entity.list; the CLI says it talks to the application.
    const appCall = run(
      'zmodu ai call --app',
      zmodu,
      [
        'ai',
        'call',
        'entity.list',
        '--app',
        'dist/app.module.js#AppModule',
        '--tenant',
        'acme',
        '--user',
        'alice',
        '--args',
        '{"entity":"ticket"}',
      ],
      app,
      { env: { ...baseEnv, DATA_DIR: 'data' } },
    );
    expect(appCall.stderr).toMatch(/zmodu: talking to the application .*dist\/app\.module\.js#AppModule \(\d+ skills\)/);
    expect(lastJsonLine(appCall.stdout)).toMatchObject({
      rows: [
        { id: 't-100', status: 'refunded' },
        { id: 't-101', status: 'open' },
      ],
    });
    const catalog = run('zmodu ai export-skills --app', zmodu, ['ai', 'export-skills', '--app', 'dist/app.module.js#AppModule'], app, {
      env: { ...baseEnv, DATA_DIR: 'data' },
    });
    expect((lastJsonLine(catalog.stdout) as { name: string }[]).map((x) => x.name)).toEqual(
      expect.arrayContaining(['entity.list', 'refund.quote', 'approval.submit']),
    );
  });

  it(`reports the installed sizes (the minimal app's target: at most ${MINIMAL_TARGET_MIB} MiB, not enforced here)`, () => {
    const { apps } = sizes();
    for (const app of APPS) {
      expect(apps[app].bytes).toBeGreaterThan(0);
      expect(apps[app].packages).toBeGreaterThan(0);
    }
    // The minimal app is a subset of the full ones.
    expect(apps.minimal.packages).toBeLessThan(apps['nest12-esm'].packages);
    expect(apps.minimal.bytes).toBeLessThan(apps['nest12-esm'].bytes);
  });
});

/**
 * The Nest 11 CommonJS app is the approvals example in another dress: the fixture keeps only what differs (its module,
 * main.ts, the jobs, its package.json and configs), and gets every other source and test of examples/approvals, with the
 * ESM `.js` suffix of relative imports taken off (CommonJS node10 resolution, as `nest new` of CLI 11 sets it up). A
 * file the fixture has of its own is never overwritten.
 */
function shareExampleSources(example: string, app: string): void {
  const walk = (rel: string): string[] =>
    readdirSync(join(example, rel), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(rel, e.name)) : e.name.endsWith('.ts') ? [join(rel, e.name)] : [],
    );
  let shared = 0;
  for (const rel of [...walk('src'), ...walk('test')]) {
    const target = join(app, rel);
    if (existsSync(target)) continue;
    const text = readFileSync(join(example, rel), 'utf8').replace(/(from '\.{1,2}\/[^']+)\.js'/g, "$1'");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    shared++;
  }
  if (shared === 0) throw new Error(`no source of ${example} was shared with ${app}: has the example moved?`);
}
