/**
 * A child process for test/chaos/cluster-pg-restart.chaos-spec.ts: a PgBossGoalQueue on the server of argv[2] with one
 * slot, one goal pushed. Its handler prints `HOLDING` and waits for a line on stdin (the test stops the server
 * meanwhile), then returns, so the job is completed while the database is away. Prints `ALIVE` 3 s later and exits 0:
 * a process that a rejection ended never gets there.
 */
import { createInterface } from 'node:readline';
import { PgBossGoalQueue } from '@zmodu/agent/internal';

async function main(): Promise<void> {
  const queue = new PgBossGoalQueue({
    connection: { connectionString: process.argv[2] },
    schema: 'chaos_boss',
    name: 'chaos_goals',
    pollingIntervalSeconds: 0.5,
    notify: false,
  });
  const lines = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => lines.once('line', () => resolve()));
  await queue.start(async () => {
    process.stdout.write('HOLDING\n');
    await go;
    setTimeout(() => {
      process.stdout.write('ALIVE\n');
      process.exit(0);
    }, 3000);
  }, 1);
  await queue.push(['run-held-through-the-restart']);
}

void main().catch((err: unknown) => {
  process.stdout.write(`FAILED ${String(err)}\n`);
  process.exit(2);
});
