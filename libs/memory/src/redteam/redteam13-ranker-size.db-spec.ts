import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { ZMODU_MEMORY_MIGRATIONS } from '../memory.migration';
import { TypeOrmMemoryStore } from '../typeorm-memory.store';

describe('red team 13: ranker and goal size', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource(await db.options({ migrations: ZMODU_MEMORY_MIGRATIONS }));
    await dataSource.initialize();
    await dataSource.runMigrations();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('RT-M9 a 4000-character goal (the edge RunGoalDto cap) of short words recalls without error', async () => {
    const store = new TypeOrmMemoryStore(dataSource);
    const s = { tenantId: 't', userId: 'u' };
    await store.remember(s, { agent: 'a', kind: 'note', content: 'likes tea' });
    const goal = 'a '.repeat(2000).trim(); // 3999 characters, 2000 words
    expect(goal.length).toBeLessThanOrEqual(4000);
    const outcome = await store.recall(s, goal, { maxEntries: 5, maxChars: 5000 }).then(
      () => 'ok',
      (e: Error) => e.message,
    );
    // the database still answers afterwards, data intact
    expect(await store.list(s, { limit: 5 })).toHaveLength(1);
    expect(outcome).toBe('ok');
  });

  it('RT-M10 the memory.recall skill query cap (500 characters) of short words recalls without error', async () => {
    const store = new TypeOrmMemoryStore(dataSource);
    const s = { tenantId: 't2', userId: 'u' };
    await store.remember(s, { agent: 'a', kind: 'note', content: 'likes tea' });
    await expect(store.recall(s, 'a '.repeat(250).trim(), { maxEntries: 5, maxChars: 5000 })).resolves.toEqual(expect.any(Array));
  });
});
