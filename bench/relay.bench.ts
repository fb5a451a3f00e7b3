import { OutboxRelay, TypeOrmOutboxStore } from '@zmodu/outbox/internal';
import { OutboxService, ZMODU_OUTBOX_MIGRATIONS } from '@zmodu/outbox';
import { PgBoss } from 'pg-boss';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { BenchServer, withBenchDatabase } from './bench-database';
import { Row } from './report';

/** Events per run of each side: a few seconds on a durable server, both sides together. */
const EVENTS = 600;
/** Our relay's deliveries in flight at once. */
const PARALLEL = 16;
/**
 * pg-boss 12's workers poll at least every 0.5 s and fetch at most batchSize jobs per poll, so its
 * throughput is workers x batchSize / 0.5 s at most (one worker with batches of 16: 32 jobs/s).
 * It gets a configuration that is not bound by that: 4 workers with batches of 100.
 */
const BOSS_WORKERS = 4;
const BOSS_BATCH = 100;
const QUEUE = 'bench.noop';

interface Throughput {
  /** Events per second, enqueued one transaction (send) at a time. */
  readonly sendPerSecond: number;
  /** Events per second from "all enqueued" to "all settled as delivered/completed" with a no-op handler. */
  readonly deliverPerSecond: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wait until `count()` reaches `n`, polling every 5 ms (the same poll for both sides). */
async function waitFor(n: number, count: () => Promise<number>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await count()) < n) {
    if (Date.now() > deadline) throw new Error(`${what}: not all ${n} events settled in 60 s`);
    await sleep(5);
  }
}

async function ours(url: string, probe: Client): Promise<Throughput> {
  const ds = new DataSource({ type: 'postgres', url, migrations: ZMODU_OUTBOX_MIGRATIONS, migrationsRun: true });
  await ds.initialize();
  try {
    const store = new TypeOrmOutboxStore(ds);
    const outbox = new OutboxService(store);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < EVENTS; i++) await outbox.publish({ tenantId: 'bench', topic: QUEUE, payload: { i } });
    const t1 = process.hrtime.bigint();
    let handled = 0;
    const relay = new OutboxRelay(store, {
      owner: 'bench',
      concurrency: PARALLEL,
      topicConcurrency: PARALLEL,
      handlerTimeoutMs: 5000,
      pollIntervalMs: 500,
    });
    relay.on(QUEUE, () => void handled++);
    const t2 = process.hrtime.bigint();
    relay.start();
    await waitFor(
      EVENTS,
      async () => Number((await probe.query(`SELECT count(*) AS n FROM zmodu_outbox WHERE status = 'delivered'`)).rows[0].n),
      'zmodu relay',
    );
    const t3 = process.hrtime.bigint();
    await relay.stop();
    if (handled < EVENTS) throw new Error(`zmodu relay: ${handled} of ${EVENTS} events reached the handler`);
    return { sendPerSecond: EVENTS / (Number(t1 - t0) / 1e9), deliverPerSecond: EVENTS / (Number(t3 - t2) / 1e9) };
  } finally {
    await ds.destroy();
  }
}

async function pgBoss(url: string, probe: Client): Promise<Throughput> {
  // pg-boss 12: createQueue before send/work; a worker fetches up to batchSize jobs per poll (at least every 0.5 s).
  const boss = new PgBoss({ connectionString: url, max: BOSS_WORKERS + 4, supervise: false, schedule: false });
  boss.on('error', (err: Error) => console.error(`pg-boss: ${String(err)}`));
  await boss.start();
  try {
    await boss.createQueue(QUEUE);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < EVENTS; i++) await boss.send(QUEUE, { i });
    const t1 = process.hrtime.bigint();
    let handled = 0;
    const t2 = process.hrtime.bigint();
    for (let w = 0; w < BOSS_WORKERS; w++)
      await boss.work(QUEUE, { batchSize: BOSS_BATCH, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        handled += jobs.length;
      });
    await waitFor(
      EVENTS,
      async () =>
        Number((await probe.query(`SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'`, [QUEUE])).rows[0].n),
      'pg-boss',
    );
    const t3 = process.hrtime.bigint();
    if (handled < EVENTS) throw new Error(`pg-boss: ${handled} of ${EVENTS} jobs reached the handler`);
    return { sendPerSecond: EVENTS / (Number(t1 - t0) / 1e9), deliverPerSecond: EVENTS / (Number(t3 - t2) / 1e9) };
  } finally {
    await boss.stop({ graceful: true, timeout: 5000 });
  }
}

/**
 * The outbox relay's throughput against pg-boss 12 on the same PostgreSQL, in the same run: N events
 * enqueued one transaction at a time, then delivered to a no-op handler (our relay: concurrency 16,
 * a claim per freed slot, one lease renewal and one settlement per event; pg-boss: 4 workers fetching
 * batches of 100 and completing each batch in one statement, polling every 0.5 s, its minimum).
 */
export async function runRelayBench(log: (line: string) => void, server: BenchServer | null): Promise<{ rows: Row[] }> {
  if (!server) return { rows: [] };
  return withBenchDatabase(server, 'zo', async (url) => {
    const probe = new Client({ connectionString: url });
    await probe.connect();
    try {
      const a = await ours(url, probe);
      const b = await pgBoss(url, probe);
      log(
        `outbox relay, ${EVENTS} events: zmodu enqueue ${a.sendPerSecond.toFixed(0)}/s, deliver ${a.deliverPerSecond.toFixed(0)}/s; ` +
          `pg-boss send ${b.sendPerSecond.toFixed(0)}/s, work ${b.deliverPerSecond.toFixed(0)}/s`,
      );
      const ratio = a.deliverPerSecond / b.deliverPerSecond;
      return {
        rows: [
          {
            name: `outbox relay: events/s delivered to a no-op handler (${PARALLEL} in flight) vs pg-boss 12 work (${BOSS_WORKERS}x${BOSS_BATCH}), PostgreSQL (ratio = ours/pg-boss)`,
            value: a.deliverPerSecond,
            unit: 'events/s',
            baseline: b.deliverPerSecond,
            target: { text: 'ratio >= 0.5', met: ratio >= 0.5 },
            note: `enqueue ${a.sendPerSecond.toFixed(0)}/s vs pg-boss send ${b.sendPerSecond.toFixed(0)}/s`,
          },
        ],
      };
    } finally {
      await probe.end().catch(() => undefined);
    }
  });
}
