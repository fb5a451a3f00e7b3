import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { memoryStoreContract } from './testing';
import { ZMODU_MEMORY_MIGRATIONS } from './memory.migration';
import { TypeOrmMemoryStore } from './typeorm-memory.store';

describe('TypeOrmMemoryStore', () => {
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

  memoryStoreContract(
    `TypeOrmMemoryStore on ${process.env.ZMODU_TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'} (contract)`,
    async (options) => {
      await dataSource.query('TRUNCATE zmodu_memory, zmodu_memory_erasures');
      return { store: new TypeOrmMemoryStore(dataSource, undefined, options) };
    },
  );

  it('stores a generated full-text column with a GIN index', async () => {
    const idx = await dataSource.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'zmodu_memory'`);
    expect(idx.map((r: { indexdef: string }) => r.indexdef).join('\n')).toMatch(/USING gin \(search\)/);
    const store = new TypeOrmMemoryStore(dataSource);
    const id = await store.remember({ tenantId: 't', userId: 'u' }, { agent: 'a', kind: 'note', content: 'Running shoes size 44' });
    const [row] = await dataSource.query(`SELECT search::text AS s FROM zmodu_memory WHERE id = $1`, [id]);
    expect(row.s).toContain("'shoes'");
  });
});
