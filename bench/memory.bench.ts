import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { serverDataSourceOptions } from '@zmodu/db';
import { TypeOrmMemoryStore } from '@zmodu/memory/internal';
import { ZMODU_MEMORY_MIGRATIONS } from '@zmodu/memory';
import { BenchServer, withBenchDatabase } from './bench-database';
import { msPerRun } from './measure';
import { Row } from './report';

const USERS = 1_000;
const PER_USER = 100;
const TOPICS = ['tea', 'coffee', 'stocks', 'travel', 'music', 'books', 'running', 'cooking'];
const CAPS = { maxEntries: 8, maxChars: 2_000 };
const GOAL = 'plan a trip with good coffee';

/** `perUser` entries for each of `users` users (numbered from `firstUser`) of tenant 'acme', written in one statement. */
async function fill(ds: DataSource, users: number, firstUser: number, perUser: number): Promise<void> {
  await ds.query(
    `INSERT INTO zmodu_memory (id, tenant_id, user_id, agent, kind, content, created_at)
     SELECT gen_random_uuid(), 'acme', 'user-' || (u + $1), 'bench', 'note',
            'note ' || n || ' about ' || ($3::text[])[1 + (n + u + $1) % array_length($3::text[], 1)] || ' and ' ||
            ($3::text[])[1 + (n * 7 + u + $1) % array_length($3::text[], 1)],
            now() - make_interval(secs => n)
     FROM generate_series(0, $2 - 1) AS u, generate_series(1, $4) AS n`,
    [firstUser, users, TOPICS, perUser],
  );
  await ds.query('ANALYZE zmodu_memory');
}

async function openStore(url: string): Promise<DataSource> {
  const ds = new DataSource(serverDataSourceOptions(url, { migrations: ZMODU_MEMORY_MIGRATIONS, migrationsRun: true, poolSize: 2 }));
  await ds.initialize();
  await ds.query('CREATE EXTENSION IF NOT EXISTS pgcrypto');
  return ds;
}

/**
 * Recall of one user's memory among 100,000 entries of 1,000 users, against the same recall in a
 * table that holds only that user's entries (the scope index keeps it flat), and against one
 * indexed point lookup by id on the big table (what any read costs at least).
 */
export async function runMemoryBench(log: (line: string) => void, server: BenchServer | null): Promise<{ rows: Row[] }> {
  if (!server) return { rows: [] };
  const rows: Row[] = [];
  await withBenchDatabase(server, 'zmb', (bigUrl) =>
    withBenchDatabase(server, 'zms', async (aloneUrl) => {
      const big = await openStore(bigUrl);
      const alone = await openStore(aloneUrl);
      try {
        await fill(big, USERS, 0, PER_USER);
        await fill(alone, 1, 500, PER_USER);
        const scope = { tenantId: 'acme', userId: 'user-500' };
        const [{ id }] = await big.query(`SELECT id FROM zmodu_memory WHERE tenant_id = 'acme' AND user_id = 'user-500' LIMIT 1`);
        const bigStore = new TypeOrmMemoryStore(big);
        const aloneStore = new TypeOrmMemoryStore(alone);
        const a = await bigStore.recall(scope, GOAL, CAPS);
        const b = await aloneStore.recall(scope, GOAL, CAPS);
        if (a.length !== CAPS.maxEntries || a.map((e) => e.content).join() !== b.map((e) => e.content).join())
          throw new Error('memory bench: the two recalls differ');
        const ms = await msPerRun(
          {
            recallBig: async () => (await bigStore.recall(scope, GOAL, CAPS)).length,
            recallAlone: async () => (await aloneStore.recall(scope, GOAL, CAPS)).length,
            lookup: async () => (await big.query('SELECT id, content FROM zmodu_memory WHERE id = $1', [id])).length,
            miss: async () => (await bigStore.recall({ tenantId: 'acme', userId: randomUUID() }, GOAL, CAPS)).length + 1,
          },
          { warmupRounds: 2, rounds: 7, runsPerRound: 50 },
        );
        const flat = ms.recallBig / ms.recallAlone;
        const vsLookup = ms.recallBig / ms.lookup;
        log(
          `memory recall over ${USERS * PER_USER} entries: ${ms.recallBig.toFixed(3)} ms; only the user's ${PER_USER}: ${ms.recallAlone.toFixed(3)} ms (${flat.toFixed(2)}x); point lookup: ${ms.lookup.toFixed(3)} ms (${vsLookup.toFixed(2)}x); a user with none: ${ms.miss.toFixed(3)} ms`,
        );
        rows.push({
          name: `memory recall (8 entries, full-text + recency) of one user among ${USERS * PER_USER} entries of ${USERS} users vs the same recall in a table of only that user's ${PER_USER}, PostgreSQL`,
          value: ms.recallBig,
          unit: 'ms/recall',
          baseline: ms.recallAlone,
          target: { text: 'ratio <= 1.5 (issue 13)', met: flat <= 1.5 },
        });
        rows.push({
          name: `memory recall among ${USERS * PER_USER} entries vs one indexed point lookup by id on the same table, PostgreSQL`,
          value: ms.recallBig,
          unit: 'ms/recall',
          baseline: ms.lookup,
          target: { text: 'ratio <= 5 (issue 13)', met: vsLookup <= 5 },
        });
      } finally {
        await big.destroy();
        await alone.destroy();
      }
    }),
  );
  return { rows };
}
