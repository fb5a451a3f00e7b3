import { ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { ZMODU_PIPELINE_MIGRATIONS } from './pipeline.migrations';
import { proposalStoreContract } from './testing';
import { TypeOrmProposalStore } from './typeorm-proposal.store';

describe('TypeOrmProposalStore (the ProposalStore contract)', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = new DataSource(
      await db.options({
        migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS],
        migrationsRun: true,
      }),
    );
    await ds.initialize();
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  proposalStoreContract(async () => ({ store: new TypeOrmProposalStore(ds) }));
});
