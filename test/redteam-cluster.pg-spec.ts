import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { PgBoss } from 'pg-boss';
import { DataSource } from 'typeorm';
import { Test, TestingModule } from '@nestjs/testing';
import {
  AGENT_GOAL_QUEUE,
  AgentModule,
  AgentWorker,
  AgentWorkerModule,
  GoalQueue,
  MailboxFullException,
  ModelProvider,
  ModelRequest,
  ModelTurn,
  ZMODU_AGENT_MIGRATIONS,
} from '@zmodu/agent';
import { InvalidWorkerOptionsException, PgBossGoalQueue, TypeOrmAgentRunStore } from '@zmodu/agent/internal';
import { openTestDataSource, TestDatabase } from '@zmodu/db/testing';

/** Runs TypeScript sources in a child process, each file transpiled once (scripts/register-ts.js). */
const REGISTER_TS = join(__dirname, '..', 'scripts', 'register-ts.js');

/** Goals starting with 'hold' wait for `held.release()` (or their abort). */
const held = { release: () => undefined as void, promise: Promise.resolve() };
const holdAgain = () => (held.promise = new Promise<void>((r) => (held.release = r)));

/** Counts the turns of each goal, on every instance of this process. */
class CountingModel implements ModelProvider {
  readonly name = 'counting';
  constructor(private readonly turns: Map<string, number>) {}
  async complete(request: ModelRequest): Promise<ModelTurn> {
    const goal = request.messages.find((m) => m.role === 'user')?.content ?? '';
    this.turns.set(goal, (this.turns.get(goal) ?? 0) + 1);
    await (goal.startsWith('hold') ? held.promise : new Promise((r) => setTimeout(r, 20)));
    return { text: 'done', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

/** Red team of cluster mode (queue driver pg-boss) on a real PostgreSQL (ZMODU_TEST_DATABASE_URL). */
describe('red team cluster mode (pg-boss)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, ds: dataSource, close } = await openTestDataSource({ migrations: ZMODU_AGENT_MIGRATIONS, migrationsRun: true }));
  }, 60_000);
  afterAll(() => close?.());

  /** Runs test/fixtures/cluster/redteam-exit.ts; resolves with its events and how it exited (by a signal: it was killed). */
  function runExitFixture(
    env: Record<string, string>,
  ): Promise<{ events: Record<string, unknown>[]; exit: { code: number | null; signal: string | null }; log: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-r', REGISTER_TS, 'test/fixtures/cluster/redteam-exit.ts'], {
        cwd: `${__dirname}/..`,
        env: { ...process.env, DATABASE_URL: db.location.url, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const events: Record<string, unknown>[] = [];
      let log = '';
      child.stdout.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          try {
            const event = JSON.parse(line) as Record<string, unknown>;
            events.push(event);
          } catch {
            log += `${line}\n`;
          }
      });
      child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
      // The hang guard: a process still alive after a minute is killed, and that fails the case below.
      const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('exit', (code, signal) => {
        clearTimeout(killer);
        resolve({ events, exit: { code, signal }, log });
      });
    });
  }

  it.each([
    ['after its run finished', {} as Record<string, string>],
    ['with a run in flight (given back to the shared queue)', { ZMODU_CLOSE_MID_RUN: '1' }],
  ])(
    'RT-C3 a process exits on its own once app.close() resolved, %s',
    async (_what, env) => {
      const { events, exit, log } = await runExitFixture(env);
      expect(events.find((e) => e.error)).toBeUndefined();
      const closed = events.find((e) => e.closed);
      const runId = closed?.closed;
      expect(typeof runId).toBe('string');
      // Once app.close() resolved, no timer was left to keep the process alive (the fixture lists them), and it ended by
      // itself, not by the hang guard's SIGKILL (a pool or a LISTEN client left open would have kept it alive until then).
      expect({ timers: closed?.timers, exit, log: exit.code === 0 ? '' : log }).toEqual({
        timers: [],
        exit: { code: 0, signal: null },
        log: '',
      });
      const [run] = await dataSource.query<{ status: string }[]>('SELECT status FROM zmodu_agent_runs WHERE id = $1', [runId]);
      if (!env.ZMODU_CLOSE_MID_RUN) return expect(run.status).toBe('succeeded');
      // Given back: interrupted in the store, and waiting in the shared queue for another instance.
      expect(run.status).toBe('interrupted');
      const jobs = await dataSource.query<unknown[]>(
        `SELECT id FROM zmodu_boss_v12.job WHERE name = 'zmodu_agent_goals' AND singleton_key = $1 AND state = 'created'`,
        [runId],
      );
      expect(jobs).toHaveLength(1);
    },
    90_000,
  );

  it('RT-C7 a goal fetched by an instance that is stopping is left for another instance, not dropped until a sweep', async () => {
    const options = {
      connection: { connectionString: db.location.url },
      schema: 'rt_boss',
      name: 'rt_goals',
      pollingIntervalSeconds: 0.5,
      notify: true,
    };
    const handledA: string[] = [];
    const handledB: string[] = [];
    const a = new PgBossGoalQueue(options);
    const b = new PgBossGoalQueue(options);
    await a.start(async (runId) => void handledA.push(runId), 1);
    // Hold a's next fetch in flight, so that its stop begins while the fetch is on the wire.
    const bossDb = (a.instance as PgBoss).getDb() as { executeSql: (sql: string, values?: unknown[]) => Promise<unknown> };
    const executeSql = bossDb.executeSql.bind(bossDb);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let fetchHeld = false;
    bossDb.executeSql = async (sql, values) => {
      // The fetch of a job (pg-boss's fetchNextJob locks with FOR UPDATE OF j SKIP LOCKED): not its maintenance, whose
      // queries lock with SKIP LOCKED too (holding one of those let the fetch through, and a took the goal).
      if (sql.includes('FOR UPDATE OF j SKIP LOCKED') && !fetchHeld) {
        fetchHeld = true;
        await gate;
      }
      return executeSql(sql, values);
    };
    const end = Date.now() + 5000;
    while (!fetchHeld && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(fetchHeld).toBe(true);
    await a.push(['run-while-stopping']);
    const stopping = a.stop(1000);
    release();
    await stopping;
    await new Promise((r) => setTimeout(r, 500));
    await a.close();
    expect(handledA).toEqual([]);
    try {
      await b.start(async (runId) => void handledB.push(runId), 1);
      const until = Date.now() + 3000;
      while (!handledB.length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(handledB).toEqual(['run-while-stopping']);
    } finally {
      await b.stop(100);
      await b.close();
    }
  }, 30_000);

  /** An instance of a clustered app in this process: its own AgentWorker and pg-boss queue, the shared database. */
  async function instance(
    turns: Map<string, number>,
    leaseMs = 1000,
    over: { concurrency?: number; mailboxSize?: number; mailboxPerTenant?: number } = {},
    init = true,
  ): Promise<TestingModule> {
    const app = await Test.createTestingModule({
      imports: [
        AgentModule.forRoot({
          agents: [{ name: 'clock', provider: new CountingModel(turns), skills: [], guard: { allow: [], allowExecute: false } }],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
        AgentWorkerModule.forRoot({
          concurrency: 3,
          leaseMs,
          shutdownGraceMs: 200,
          runStore: new TypeOrmAgentRunStore(dataSource),
          ...over,
          queue: { driver: 'pg-boss', connectionString: db.location.url, schema: 'rt_boss2', pollingIntervalSeconds: 0.5 },
        }),
      ],
    }).compile();
    if (init) await app.init();
    return app;
  }

  const settled = async (ids: string[]) =>
    dataSource.query<{ id: string; status: string; attempts: number }[]>(
      `SELECT id, status, attempts FROM zmodu_agent_runs WHERE id = ANY($1::text[]) AND status IN ('succeeded', 'failed')`,
      [ids],
    );

  it('RT-C8 duplicate deliveries (sweeps of two instances, repeated sends) never run a goal twice', async () => {
    const turns = new Map<string, number>();
    const [a, b] = await Promise.all([instance(turns), instance(turns)]);
    try {
      const posted = await Promise.all(
        Array.from({ length: 30 }, (_, i) => a.get(AgentWorker).post(`dup goal ${i}`, { tenantId: 't1', userId: 'u', permissions: [] })),
      );
      const ids = posted.map((p) => p.runId);
      // Every instance's goal queue sends every run again, several times, while they run.
      const queues = [a, b].map((app) => app.get<GoalQueue>(AGENT_GOAL_QUEUE));
      for (let round = 0; round < 5; round++) await Promise.all(queues.map((q) => q.push(ids)));
      const end = Date.now() + 15_000;
      while ((await settled(ids)).length < ids.length && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      const rows = await settled(ids);
      expect(rows).toHaveLength(30);
      expect(rows.every((r) => r.status === 'succeeded' && Number(r.attempts) === 1)).toBe(true);
      expect([...turns.entries()].filter(([goal]) => goal.startsWith('dup goal')).map(([, n]) => n)).toEqual(Array(30).fill(1));
      // Read on the other instance: the tenant's run, and nothing for another tenant.
      expect(await b.get(AgentWorker).get('t1', ids[0])).toMatchObject({ id: ids[0], status: 'succeeded', tenantId: 't1' });
      expect(await b.get(AgentWorker).get('t2', ids[0])).toBeNull();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it('RT-C9 a run stored without its queue message (the instance died in between) runs, found by the sweep of stored runs', async () => {
    const turns = new Map<string, number>();
    const leaseMs = 1000;
    const [a, b] = await Promise.all([instance(turns, leaseMs), instance(turns, leaseMs)]);
    try {
      await dataSource.query(
        `INSERT INTO zmodu_agent_runs (id, tenant_id, user_id, agent, goal, max_attempts) VALUES ('orphan-run', 't1', 'u', 'clock', 'orphan goal', 3)`,
      );
      // Nothing posts it: only the instances' sweep of stored runs (every leaseMs) finds it. Polled with a bound; how
      // soon it is found is the sweep's period, not a test's to time.
      for (let i = 0; i < 600 && !(await settled(['orphan-run'])).length; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await settled(['orphan-run'])).toEqual([{ id: 'orphan-run', status: 'succeeded', attempts: 1 }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it('RT-C11 wake-ups survive a lost LISTEN connection (a restart of the server, a proxy timeout): it is opened again', async () => {
    const options = {
      connection: { connectionString: db.location.url },
      schema: 'rt_boss3',
      name: 'rt_goals3',
      pollingIntervalSeconds: 60, // only a NOTIFY wakes the idle slot within this test
      notify: true,
    };
    const handled: string[] = [];
    const a = new PgBossGoalQueue(options);
    const b = new PgBossGoalQueue(options);
    const waitFor = async (runId: string) => {
      const end = Date.now() + 4000;
      while (!handled.includes(runId) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      return handled.includes(runId);
    };
    try {
      await a.start(async (runId) => void handled.push(runId), 1);
      await b.start(async () => undefined, 0); // posts only
      await new Promise((r) => setTimeout(r, 500)); // a's slot has polled once and sleeps
      await b.push(['before-loss']);
      expect(await waitFor('before-loss')).toBe(true);
      // pg-boss's LISTEN connections (its channel is named after the schema; its heartbeat runs every 10 s, later).
      const killed = await dataSource.query<unknown[]>(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()
           AND query = 'LISTEN "pgboss_' || left(encode(sha224('rt_boss3'::bytea), 'hex'), 24) || '"'`,
      );
      expect(killed).toHaveLength(2); // a's and b's
      await new Promise((r) => setTimeout(r, 2500));
      await b.push(['after-loss']);
      expect(await waitFor('after-loss')).toBe(true);
    } finally {
      await Promise.all([a.stop(100), b.stop(100)]);
      await Promise.all([a.close(), b.close()]);
    }
  }, 30_000);

  it('RT-C17 refuses a queue.schema holding pg-boss 10 (which pg-boss 12 cannot migrate), saying what to do, and leaves it as it was', async () => {
    // What pg-boss 10.4 leaves in its schema, as far as pg-boss 12 reads it: the version table at schema version 24
    // (checked once against a schema made by pg-boss 10.4.2 itself: the same refusal).
    await dataSource.query(`CREATE SCHEMA rt_boss10`);
    await dataSource.query(`CREATE TABLE rt_boss10.version (version int PRIMARY KEY, maintained_on timestamptz, cron_on timestamptz)`);
    await dataSource.query(`INSERT INTO rt_boss10.version (version) VALUES (24)`);
    const queue = new PgBossGoalQueue({
      connection: { connectionString: db.location.url },
      schema: 'rt_boss10',
      name: 'rt_goals10',
      pollingIntervalSeconds: 0.5,
      notify: true,
    });
    const refused = await queue.start(async () => undefined, 2).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidWorkerOptionsException);
    expect((refused as InvalidWorkerOptionsException).field).toBe('queue.schema');
    expect((refused as Error).message).toMatch(/schema rt_boss10 holds the tables of pg-boss 10 \(schema version 24\)/);
    expect((refused as Error).message).toMatch(/set queue\.schema to a new schema \(the default is zmodu_boss_v12\)/);
    // Nothing migrated, nothing left running (pg-boss's pool and LISTEN connection are closed).
    expect(await dataSource.query(`SELECT version FROM rt_boss10.version`)).toEqual([{ version: 24 }]);
    const open = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'zmodu-agent-worker'`,
    );
    expect(open).toEqual([{ n: 0 }]);
    await expect(queue.probe()).rejects.toThrow(/pg-boss is not started/);
  }, 30_000);

  it('RT-C15 hands a run taken back from a dead instance to the next free slot, before newer goals (attack: recovery queued behind new work)', async () => {
    const queue = new PgBossGoalQueue({
      connection: { connectionString: db.location.url },
      schema: 'rt_boss4',
      name: 'rt_goals4',
      pollingIntervalSeconds: 0.5,
      notify: false,
    });
    const order: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    await queue.start(async (runId) => {
      order.push(runId);
      if (runId === 'holding') await gate;
    }, 1);
    try {
      await queue.push(['holding']);
      const end = Date.now() + 10_000;
      while (!order.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      await queue.push(['newer-1', 'newer-2', 'newer-3']);
      await queue.push(['recovered'], { first: true });
      open();
      while (order.length < 5 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      // The recovered run next; the newer ones after it (one insert: pg-boss orders them by id among themselves).
      expect(order.slice(0, 2)).toEqual(['holding', 'recovered']);
      expect(order.slice(2).sort()).toEqual(['newer-1', 'newer-2', 'newer-3']);
    } finally {
      await queue.stop(100);
      await queue.close();
    }
  }, 30_000);

  it('RT-C12 the mailbox bound counts the goals queued on every instance, and MailboxFull says when to retry', async () => {
    holdAgain();
    const turns = new Map<string, number>();
    const [a, b] = await Promise.all([1, 2].map(() => instance(turns, 2000, { concurrency: 1, mailboxSize: 3, mailboxPerTenant: 3 })));
    const scope = { tenantId: 't1', userId: 'u', permissions: [] };
    try {
      await a.get(AgentWorker).post('hold 1', scope);
      await a.get(AgentWorker).post('hold 2', scope);
      const end = Date.now() + 5000;
      while ((turns.get('hold 1') ?? 0) + (turns.get('hold 2') ?? 0) < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      for (const i of [3, 4, 5]) await b.get(AgentWorker).post(`hold ${i}`, scope); // both slots busy: these wait
      await new Promise((r) => setTimeout(r, 1300)); // a reads the shared count again (every second)
      const refused = await a
        .get(AgentWorker)
        .post('one too many', scope)
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(MailboxFullException);
      expect((refused as MailboxFullException).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    } finally {
      held.release();
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it('RT-C16 bounds the whole mailbox in the database: 40 concurrent posts on two instances under mailboxSize 10 store exactly 10 (attack: each instance admits up to the bound from its own count)', async () => {
    holdAgain();
    // The bound counts every waiting run of the table: the cases above leave some (their apps are closed).
    await dataSource.query(`DELETE FROM zmodu_agent_runs WHERE status IN ('queued', 'interrupted')`);
    const turns = new Map<string, number>();
    const [a, b] = await Promise.all([1, 2].map(() => instance(turns, 2000, { concurrency: 1, mailboxSize: 10, mailboxPerTenant: 10 })));
    const scope = (tenantId: string) => ({ tenantId, userId: 'u', permissions: [] });
    try {
      // Both slots busy (one per instance): the flood below only waits, nothing drains.
      await a.get(AgentWorker).post('hold slot 1', scope('t1'));
      await b.get(AgentWorker).post('hold slot 2', scope('t1'));
      const end = Date.now() + 5000;
      while ((turns.get('hold slot 1') ?? 0) + (turns.get('hold slot 2') ?? 0) < 2 && Date.now() < end)
        await new Promise((r) => setTimeout(r, 20));
      // 40 tenants, one post each (no tenant's share is in play), half on each instance, all at once.
      const posts = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).get(AgentWorker).post(`hold flood ${i}`, scope(`flood-${i}`))),
      );
      const refused = posts.flatMap((p) => (p.status === 'rejected' ? [p.reason as unknown] : []));
      const [{ n }] = await dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM zmodu_agent_runs WHERE goal LIKE 'hold flood %'`,
      );
      expect({ stored: n, accepted: posts.length - refused.length }).toEqual({ stored: 10, accepted: 10 });
      expect(refused.every((e) => e instanceof MailboxFullException && e.tenantShare === undefined)).toBe(true);
    } finally {
      held.release();
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it('RT-C14 an app closed while it still boots (SIGTERM during start) leaves no pg-boss running: no slot, no connection', async () => {
    const turns = new Map<string, number>();
    const app = await instance(turns, 1000, {}, false);
    const booting = app.init();
    await new Promise((r) => setTimeout(r, 30)); // pg-boss is starting
    await app.close();
    await booting; // Nest's close waits for the boot, then shuts the worker down
    await new Promise((r) => setTimeout(r, 1000));
    const open = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'zmodu-agent-worker'`,
    );
    await dataSource.query(
      `INSERT INTO zmodu_agent_runs (id, tenant_id, user_id, agent, goal, max_attempts) VALUES ('after-close', 't1', 'u', 'clock', 'after close', 3)`,
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect({ open, turns: turns.get('after close') ?? 0 }).toEqual({ open: [{ n: 0 }], turns: 0 });
    await dataSource.query(`DELETE FROM zmodu_agent_runs WHERE id = 'after-close'`);
  }, 30_000);
});
