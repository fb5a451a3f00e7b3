import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { freePort } from '../support/free-port';
import { call, CHAOS_SECRET as SECRET, killHard, ready, SampleProcess, startSample } from '../support/sample-process';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', '..', 'scripts', 'register-ts.js');

const ROOT = join(__dirname, '..', '..');
const PROPOSAL_ID = /Proposal ([0-9a-f-]{36})/;
/** The sample on PGlite from its sources: a first start runs initdb and every migration (minutes on a loaded machine). */
const READY_MS = 240_000;

/** The zmodu CLI (bin/zmodu.js, from the sources) as a process of its own. */
function zmodu(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'bin', 'zmodu.js'), ...args], { cwd: ROOT, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

/**
 * The chaos suite: two processes on one embedded database folder, the sample app and the CLI (the docs name the same
 * `.data/pglite` for both). Before the folder lock, the CLI's open corrupted the app's database (a table unreadable after
 * a restart: "pg_attribute catalog is missing 6 attribute(s)", then Aborted() at open). Now the second opener is refused
 * with a message naming the holder and how to share the data through PostgreSQL instead; the first goes on serving; the
 * data is whole afterwards for the CLI (after the app stopped, or was killed: its stale lock is taken over) and for the
 * app started again.
 */
describe('chaos: the sample app and the CLI on one embedded database folder', () => {
  let base: string;
  let dataDir: string;
  let config: string;
  let sample: SampleProcess | undefined;
  const env = () => ({ ZMODU_DATA_DIR: dataDir, DATABASE_URL: '', ZMODU_JWT_SECRET: SECRET });
  const trader = (user: string) => mintToken(SECRET, { tenant: 'acme', user });

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'zmodu-chaos-folder-'));
    dataDir = join(base, 'pglite');
    config = join(base, 'zmodu.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        database: { dataDir },
        tenantColumn: 'tenant_id',
        entities: [{ name: 'proposal', table: 'zmodu_proposals', pk: 'id', tenantColumn: 'tenant_id', columns: ['id', 'status'] }],
        fence: { mode: 'off' },
        policy: { allow: ['entity.list'], deny: [], allowExecute: false },
      }),
    );
  });

  afterAll(async () => {
    await killHard(sample);
    rmSync(base, { recursive: true, force: true });
  });

  /** A trader run that proposes an order (the offline scripted model): the proposal's id. */
  async function propose(qty: number): Promise<string> {
    const res = await call(sample as SampleProcess, 'POST', '/agents/trader/runs', trader(`trader-${qty}`), { goal: `buy ${qty} ACME` });
    expect([res.status, PROPOSAL_ID.test(String(res.body.answer))]).toEqual([200, true]);
    return PROPOSAL_ID.exec(String(res.body.answer))?.[1] as string;
  }

  /** The CLI's entity.list of acme's proposals. */
  const listProposals = () =>
    zmodu(
      'ai',
      'call',
      'entity.list',
      '--config',
      config,
      '--tenant',
      'acme',
      '--user',
      'ops',
      '--args',
      '{"entity":"proposal","limit":100}',
    );

  /** The ids of the rows `call` printed (the skill's value: { entity, rows, ... }). */
  const idsOf = (stdout: string) => ((JSON.parse(stdout) as { rows?: Array<{ id: string }> }).rows ?? []).map((r) => r.id).sort();

  it('refuses the second opener (the CLI, another app), keeps serving, and the data is whole after a stop and after a SIGKILL', async () => {
    sample = await startSample(env(), READY_MS);
    const written = [await propose(5)];

    // 1. The CLI while the app runs: refused, naming the app's process and the way to share the data.
    const refused = await listProposals();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is in use by process ${sample.child.pid} `);
    expect(refused.stderr).toContain('"database": { "url": "postgres://..." } in place of "dataDir"');
    expect(refused.stdout).toBe('');

    // 2. A second app on the folder: it does not start, and says why in one line (no stack).
    const port = await freePort();
    const second = spawn(process.execPath, ['-r', REGISTER_TS, 'apps/sample/src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env(), PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    second.stdout?.on('data', (c: Buffer) => (log += c.toString()));
    second.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    expect(await new Promise((resolve) => second.on('exit', resolve))).toBe(1);
    expect(log).toMatch(new RegExp(`^error: The embedded database folder .* is in use by process ${sample.child.pid} `, 'm'));
    expect(log).not.toMatch(/^\s+at /m);

    // 3. The first app goes on: ready, and it writes.
    expect(await ready(sample)).toBe(200);
    written.push(await propose(6));

    // 4. Stopped (SIGTERM): its lock is gone; the CLI opens the folder and finds everything the app wrote.
    sample.child.kill('SIGTERM');
    expect(await sample.exited).toBe(0);
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    const afterStop = await listProposals();
    expect([afterStop.code, afterStop.stderr]).toEqual([0, '']);
    expect(idsOf(afterStop.stdout)).toEqual([...written].sort());

    // 5. The app again, killed with SIGKILL after one more write: its lock stays, stale; the CLI takes it over.
    sample = await startSample(env(), READY_MS);
    written.push(await propose(7));
    const killedPid = sample.child.pid;
    await killHard(sample);
    expect(JSON.parse(readFileSync(`${dataDir}.lock`, 'utf8'))).toMatchObject({ pid: killedPid });
    const afterKill = await listProposals();
    expect([afterKill.code, afterKill.stderr]).toEqual([0, '']);
    expect(idsOf(afterKill.stdout)).toEqual([...written].sort());

    // 6. And the app on the folder once more: it opens it (no corruption) and serves what was written.
    sample = await startSample(env(), READY_MS);
    const lead = mintToken(SECRET, { tenant: 'acme', user: 'lee', permissions: ['approval:decide', 'desk:lead'] });
    const list = await call(sample, 'GET', '/admin/approvals?status=pending&limit=100', lead);
    expect(list.status).toBe(200);
    expect(((list.body.items as Array<{ id: string }>) ?? []).map((p) => p.id).sort()).toEqual([...written].sort());
  }, 1_200_000);
});
