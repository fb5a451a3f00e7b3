import { ChildProcess, spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedDatabase } from '@zmodu/db';
import { Client } from 'pg';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { freePort } from './support/free-port';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', 'scripts', 'register-ts.js');

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/** One POST over a kept-alive connection; resolves with the status and body, or null when the connection was refused or closed. */
function post(
  agent: Agent,
  port: number,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: { steps?: Array<{ toolCalls: unknown[] }> } } | null> {
  return new Promise((resolve) => {
    const data = JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch {
            resolve({ status: res.statusCode ?? 0, body: {} });
          }
        });
        res.on('error', () => resolve(null));
      },
    );
    req.on('error', () => resolve(null));
    req.end(data);
  });
}

/**
 * SIGTERM under keep-alive load: the server stops taking requests, drains, then flushes. Every
 * tool call of every answered run has its audit entry in the database after the process exits.
 */
describe('sample server: SIGTERM under keep-alive load', () => {
  // On PostgreSQL (ZMODU_TEST_DATABASE_URL) a database of the test's own; else the embedded PGlite in a folder of its own.
  let db: TestDatabase | undefined;
  let dataDir: string | undefined;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    if (process.env.ZMODU_TEST_DATABASE_URL) db = await createTestDatabase();
    else dataDir = mkdtempSync(join(tmpdir(), 'zmodu-shutdown-'));
  });

  afterAll(async () => {
    child?.kill('SIGKILL');
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Audit rows of the trader, read after the server exited. */
  async function traderAuditRows(): Promise<number> {
    const sql = `SELECT count(*)::int AS n FROM zmodu_audit_log WHERE agent = 'trader'`;
    if (dataDir) {
      const embedded = await openEmbeddedDatabase({ dataDir });
      try {
        return ((await embedded.query(sql)).rows[0] as { n: number }).n;
      } finally {
        await embedded.close();
      }
    }
    const client = new Client({ connectionString: db?.location.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows[0].n;
    } finally {
      await client.end();
    }
  }

  it('loses no audit entry of an answered call, and exits', async () => {
    const port = await freePort();
    child = spawn(process.execPath, ['-r', REGISTER_TS, 'apps/sample/src/main.ts'], {
      cwd: `${__dirname}/..`,
      env: {
        ...process.env,
        ...(db ? { DATABASE_URL: db.location.url } : { ZMODU_DATA_DIR: dataDir, DATABASE_URL: '' }),
        ZMODU_JWT_SECRET: SECRET,
        ZMODU_DEV: '1',
        PORT: String(port),
        ZMODU_DRAIN_MS: '5000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout?.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    const exited = new Promise<number | null>((resolve) => child?.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 600 && !log.includes('trading assistant on'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(log).toContain('trading assistant on');

    const agent = new Agent({ keepAlive: true, maxSockets: 6 });
    let answeredCalls = 0;
    let answeredRuns = 0;
    let stop = false;
    const worker = async (w: number) => {
      const token = mintToken(SECRET, { tenant: 'acme', user: `load-${w}` });
      while (!stop) {
        const res = await post(agent, port, '/agents/trader/runs', token, { goal: 'Buy 1 ACME' });
        if (res === null) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        if (res.status === 200) {
          answeredRuns++;
          answeredCalls += (res.body.steps ?? []).reduce((n, s) => n + s.toolCalls.length, 0);
        }
      }
    };
    const workers = Array.from({ length: 6 }, (_, w) => worker(w));
    while (answeredRuns < 20) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    const code = await exited;
    stop = true;
    await Promise.all(workers);
    agent.destroy();
    expect(code).toBe(0);
    expect(answeredRuns).toBeGreaterThanOrEqual(20);

    expect(await traderAuditRows()).toBe(answeredCalls);
    expect(answeredCalls).toBeGreaterThan(0);
  }, 180_000);
});
