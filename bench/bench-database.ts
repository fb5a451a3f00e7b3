import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../test/support/free-port';

export interface BenchServer {
  readonly url: string;
  stop(): void;
}

/** A database of its own on the server for `fn`, dropped after it. */
export async function withBenchDatabase<T>(server: BenchServer, prefix: string, fn: (url: string) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: server.url });
  await admin.connect();
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/**
 * ZMODU_BENCH_DATABASE_URL, or a throwaway server started with scripts/postgres.sh with the server's
 * durable defaults (a committed INSERT pays its fsync, as in production); null (with a note) when neither works.
 */
export async function postgresServer(log: (line: string) => void): Promise<BenchServer | null> {
  const given = process.env.ZMODU_BENCH_DATABASE_URL;
  if (given) return { url: given, stop: () => undefined };
  const script = join(__dirname, '..', 'scripts', 'postgres.sh');
  try {
    const port = await freePort();
    const [url, dir] = execFileSync('bash', [script, 'start', String(port), 'durable'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .trim()
      .split(' ');
    return { url, stop: () => execFileSync('bash', [script, 'stop', dir], { stdio: 'ignore' }) };
  } catch (err) {
    log(`no PostgreSQL server for the db.query rows (set ZMODU_BENCH_DATABASE_URL): ${(err as Error).message.split('\n')[0]}`);
    return null;
  }
}
