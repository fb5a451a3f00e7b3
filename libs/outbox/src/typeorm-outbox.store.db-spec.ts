import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { outboxStoreContract } from './testing';
import { ZMODU_OUTBOX_MIGRATIONS } from './outbox.migration';
import { TypeOrmOutboxStore } from './typeorm-outbox.store';

describe('TypeOrmOutboxStore', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource(await db.options({ migrations: ZMODU_OUTBOX_MIGRATIONS }));
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  outboxStoreContract(`TypeOrmOutboxStore on ${process.env.ZMODU_TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'} (contract)`, async () => {
    await dataSource.query('TRUNCATE zmodu_outbox');
    return { store: new TypeOrmOutboxStore(dataSource) };
  });
});
