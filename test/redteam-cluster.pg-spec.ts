import { spawn } from 'node:child_process';
import { DataSource } from 'typeorm';
import { ZMODU_AGENT_MIGRATIONS } from '@zmodu/agent';
import { openTestDataSource, TestDatabase } from '@zmodu/db/testing';

/** Red team of cluster mode (queue driver pg-boss) on a real PostgreSQL (ZMODU_TEST_DATABASE_URL). */
describe('red team cluster mode (pg-boss)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, ds: dataSource, close } = await openTestDataSource({ migrations: ZMODU_AGENT_MIGRATIONS, migrationsRun: true }));
  }, 60_000);
  afterAll(() => close?.());

  /** Runs test/fixtures/cluster/redteam-exit.ts; resolves with its events and how long it lived after app.close(). */
  function runExitFixture(env: Record<string, string>): Promise<{ events: Record<string, unknown>[]; lingerMs: number; log: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'test/fixtures/cluster/redteam-exit.ts'],
        { cwd: `${__dirname}/..`, env: { ...process.env, DATABASE_URL: db.location.url, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const events: Record<string, unknown>[] = [];
      let log = '';
      let closedAt = 0;
      child.stdout.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          try {
            const event = JSON.parse(line) as Record<string, unknown>;
            if (event.closed) closedAt = Date.now();
            events.push(event);
          } catch {
            log += `${line}\n`;
          }
      });
      child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
      const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('exit', () => {
        clearTimeout(killer);
        resolve({ events, lingerMs: closedAt ? Date.now() - closedAt : Infinity, log });
      });
    });
  }

  it.each([
    ['after its run finished', {} as Record<string, string>],
    ['with a run in flight (given back to the shared queue)', { ZMODU_CLOSE_MID_RUN: '1' }],
  ])(
    'RT-C3 a process exits on its own once app.close() resolved, %s',
    async (_what, env) => {
      const { events, lingerMs, log } = await runExitFixture(env);
      expect(events.find((e) => e.error)).toBeUndefined();
      const runId = events.find((e) => e.closed)?.closed;
      expect(typeof runId).toBe('string');
      if (lingerMs >= 3000) throw new Error(`the process lived ${lingerMs} ms after app.close(): ${log}`);
      const [run] = await dataSource.query<{ status: string }[]>('SELECT status FROM zmodu_agent_runs WHERE id = $1', [runId]);
      if (!env.ZMODU_CLOSE_MID_RUN) return expect(run.status).toBe('succeeded');
      // Given back: interrupted in the store, and waiting in the shared queue for another instance.
      expect(run.status).toBe('interrupted');
      const jobs = await dataSource.query<unknown[]>(
        `SELECT id FROM zmodu_boss.job WHERE name = 'zmodu_agent_goals' AND singleton_key = $1 AND state = 'created'`,
        [runId],
      );
      expect(jobs).toHaveLength(1);
    },
    90_000,
  );
});
