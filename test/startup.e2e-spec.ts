import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './support/free-port';
import { MODEL_VARS } from './support/model-env';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', 'scripts', 'register-ts.js');

const ROOT = join(__dirname, '..');
// The model variables too: the server's agents would run on the caller's real model.
const SECRET_VARS = ['ZMODU_JWT_SECRET', 'ZMODU_DEV', 'NODE_ENV', 'DATABASE_URL', 'ZMODU_DATA_DIR', ...MODEL_VARS];

interface Server {
  readonly exited: Promise<number | null>;
  log(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The sample's real server process (`main.ts`, from its sources), on a database of the test's own. */
function startServer(env: Record<string, string>): Server {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SECRET_VARS.includes(k))) as Record<string, string>;
  const child = spawn(process.execPath, ['-r', REGISTER_TS, 'apps/sample/src/main.ts'], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    exited,
    log: () => log,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

async function within<T>(ms: number, what: Promise<T>): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([what, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function answers(port: number, path: string): Promise<number | null> {
  try {
    return (await fetch(`http://127.0.0.1:${port}${path}`)).status;
  } catch {
    return null;
  }
}

// The server process, on the test's database (PGlite in a folder of its own, or PostgreSQL when
// ZMODU_TEST_DATABASE_URL is set).
describe('the sample server fails closed on its secret', () => {
  jest.setTimeout(180_000);
  let db: TestDatabase | undefined;
  let dataDir: string | undefined;
  let database: Record<string, string>;

  beforeAll(async () => {
    if (process.env.ZMODU_TEST_DATABASE_URL) {
      db = await createTestDatabase();
      database = { DATABASE_URL: db.location.url as string };
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'zmodu-startup-'));
      database = { ZMODU_DATA_DIR: dataDir };
    }
  });

  afterAll(async () => {
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it.each([
    ['nothing set', {}],
    ['NODE_ENV=Production', { NODE_ENV: 'Production' }],
    ['NODE_ENV=development and ZMODU_DEV=true (only 1 switches it on)', { NODE_ENV: 'development', ZMODU_DEV: 'true' }],
    ['a secret of 40 spaces', { ZMODU_JWT_SECRET: ' '.repeat(40) }],
  ])(
    'refuses to start without a usable ZMODU_JWT_SECRET (%s): exit 1, one line saying what to set, never listening',
    async (_name, env) => {
      const port = await freePort();
      const server = startServer({ ...database, ...env, PORT: String(port) });
      const code = await within(60_000, server.exited);
      expect(code).toBe(1);
      expect(server.log()).toMatch(
        /^error: ZMODU_JWT_SECRET (is not set: set it to a secret of 32\+ non-blank characters.*ZMODU_DEV=1|must have at least 32 non-blank characters)/m,
      );
      expect(server.log()).not.toMatch(/trading assistant on|at \w+ \(/);
      expect(await answers(port, '/health')).toBeNull();
    },
  );

  it('starts with ZMODU_DEV=1 on the development secret, warning about it, and answers readiness', async () => {
    const port = await freePort();
    const server = startServer({ ...database, ZMODU_DEV: '1', PORT: String(port), ZMODU_DRAIN_MS: '1000' });
    try {
      for (let i = 0; i < 900 && !server.log().includes('trading assistant on'); i++) {
        if ((await within(100, server.exited)) !== 'timeout') break;
      }
      expect(server.log()).toContain('trading assistant on');
      expect(server.log()).toMatch(/warning: ZMODU_JWT_SECRET is not set and ZMODU_DEV=1: using the public development secret/);
      expect(await answers(port, '/health/ready')).toBe(200);
      expect(await answers(port, '/agents')).toBe(401);
    } finally {
      expect(await within(60_000, server.stop())).toBe(0);
    }
  });
});
