import { join } from 'node:path';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { Client } from 'pg';
import { MODEL_VARS } from './model-env';
import { freePort } from './free-port';
import { pausePostgres, POSTGRES_SCRIPT, resumePostgres } from './own-postgres';
import { ChatRequest, FakeTurn, openAIProtocolServer, OpenAIProtocolServer } from './openai-protocol-server';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', '..', 'scripts', 'register-ts.js');

/** A PostgreSQL server of the test's own (scripts/postgres.sh), and a client on it. */
export interface OwnServer {
  readonly url: string;
  readonly dir: string;
  readonly db: Client;
}

/**
 * `durable`: the server's own defaults (fsync, synchronous commit) instead of the test suites' fast settings: a spec that
 * kills the server (an immediate shutdown) needs every acknowledged commit to survive it.
 */
export async function startOwnServer(options: { durable?: boolean } = {}): Promise<OwnServer> {
  const args = ['start', String(await freePort()), ...(options.durable ? ['durable'] : [])];
  const [url, dir] = execFileSync(POSTGRES_SCRIPT, args, { encoding: 'utf8' }).trim().split(' ');
  const db = new Client({ connectionString: url });
  await db.connect();
  return { url, dir, db };
}

/** The rows of a query on the test's own client. */
export async function rows<T = Record<string, unknown>>(server: OwnServer, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await server.db.query(sql, params)).rows as T[];
}

/** The secret the chaos specs sign their tokens with, and the lease of a background run they give the sample. */
export const CHAOS_SECRET = 'chaos-secret-that-is-long-enough-for-hs256-0123456789';
export const CHAOS_LEASE_MS = 2000;

/** The sample's environment on `server`, its agents on the local model server at `modelUrl`. */
export function sampleEnv(server: OwnServer, modelUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: server.url,
    ZMODU_JWT_SECRET: CHAOS_SECRET,
    ZMODU_MODEL_PROVIDER: 'openai',
    OPENAI_API_KEY: 'local',
    OPENAI_BASE_URL: modelUrl,
    ZMODU_WORKER_LEASE_MS: String(CHAOS_LEASE_MS),
    ...extra,
  };
}

/** A model turn that proposes buying `qty` of `symbol` at `limitPrice` with approval.submit. */
export function proposeOrder(symbol: string, qty: number, limitPrice: number) {
  return {
    toolCalls: [{ name: 'approval.submit', arguments: { action: 'order.submit', payload: { symbol, side: 'buy', qty, limitPrice } } }],
  };
}

/**
 * An outage of the test's own server: stopped (pg_ctl's `fast` shutdown terminates the sessions with 57P01, `immediate`
 * kills them and leaves crash recovery to the next start), its data kept. The test's own client ends with it: read
 * with `rowsOnce` until the server is resumed.
 */
export async function pauseServer(server: OwnServer, mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
  await server.db.end().catch(() => undefined);
  await pausePostgres(server.dir, mode);
}

/** Start the paused server again (same port, same data); resolves with a connected client once it answers. */
export async function resumeServer(server: OwnServer): Promise<OwnServer> {
  await resumePostgres(server.dir);
  const db = new Client({ connectionString: server.url });
  await db.connect();
  return { ...server, db };
}

/** The rows of a query on a connection of its own (opened and closed around it): for specs whose server restarts. */
export async function rowsOnce<T = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const db = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await db.connect();
  try {
    return (await db.query(sql, params)).rows as T[];
  } finally {
    await db.end().catch(() => undefined);
  }
}

export async function stopServer(server: OwnServer | undefined): Promise<void> {
  await server?.db.end().catch(() => undefined);
  if (server?.dir) execFileSync(POSTGRES_SCRIPT, ['stop', server.dir]);
}

/** The sample server (apps/sample/src/main.ts from its sources, no build needed) as a child process. */
export interface SampleProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** Everything it wrote (JSON log lines on stdout, stderr), across its life. */
  log(): string;
  readonly exited: Promise<number | null>;
}

/** `readyMs`: how long it may take to be ready (a first start on PGlite runs initdb and every migration). */
export async function startSample(env: Record<string, string>, readyMs = 90_000): Promise<SampleProcess> {
  const port = await freePort();
  const inherited = { ...process.env };
  for (const name of MODEL_VARS) delete inherited[name];
  const child = spawn(process.execPath, ['-r', REGISTER_TS, 'apps/sample/src/main.ts'], {
    cwd: `${__dirname}/../..`,
    env: { ...inherited, ZMODU_RATE_LIMIT: '100000', LOG_LEVEL: 'info', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const sample = { child, port, log: () => log, exited };
  const until = Date.now() + readyMs;
  while ((await ready(sample)) !== 200) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`the sample did not become ready:\n${log.slice(-3000)}`);
    await sleep(200);
  }
  return sample;
}

/** GET /health/ready: its status, or 0 when nothing answers. */
export async function ready(sample: SampleProcess): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${sample.port}/health/ready`, { signal: AbortSignal.timeout(5000) })).status;
  } catch {
    return 0;
  }
}

/** SIGKILL: no shutdown hook, no drain, no flush. */
export async function killHard(sample: SampleProcess | undefined): Promise<void> {
  if (!sample || sample.child.exitCode !== null || sample.child.signalCode !== null) return;
  sample.child.kill('SIGKILL');
  await sample.exited;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `check` until it returns a value other than undefined, at most `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** A JSON request to the sample as the bearer of `token`. */
export async function call(
  sample: SampleProcess,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${sample.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

/** Instances of the sample (child processes) on a PostgreSQL server of the suite's own, their model a local server. */
export interface ChaosCluster {
  /** The server (replaced by `resumeServer` after an outage: assign it back). */
  pg: OwnServer;
  /** The model server of the first `play`. */
  readonly model: OpenAIProtocolServer;
  /** A model server per `play`, in their order. */
  readonly models: readonly OpenAIProtocolServer[];
  /** The instances the spec started (push them): killed in the afterAll. */
  readonly samples: SampleProcess[];
}

type Play = (request: ChatRequest) => FakeTurn | Promise<FakeTurn>;

/**
 * A ChaosCluster for the enclosing describe: the server (`durable`: see startOwnServer) and a model server for each
 * `play` (one, or several: an instance's model of its own) started in a beforeAll; in an afterAll, `beforeStop` (e.g.
 * releasing held turns, killing instances the spec keeps apart), the instances killed, the servers stopped.
 */
export function chaosClusterForSuite(
  plays: Play | readonly Play[],
  options: { durable?: boolean; beforeStop?: () => void | Promise<void> } = {},
): ChaosCluster {
  const cluster = { samples: [] as SampleProcess[], models: [] as OpenAIProtocolServer[] } as {
    pg: OwnServer;
    model: OpenAIProtocolServer;
    models: OpenAIProtocolServer[];
    samples: SampleProcess[];
  };
  beforeAll(async () => {
    cluster.pg = await startOwnServer({ durable: options.durable });
    for (const play of typeof plays === 'function' ? [plays] : plays) cluster.models.push(await openAIProtocolServer(play));
    cluster.model = cluster.models[0];
  }, 60_000);
  afterAll(async () => {
    await options.beforeStop?.();
    for (const sample of cluster.samples) await killHard(sample);
    for (const model of cluster.models) await model.close();
    await stopServer(cluster.pg);
  });
  return cluster;
}
