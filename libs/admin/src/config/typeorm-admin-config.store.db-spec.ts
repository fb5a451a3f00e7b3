import { openTestDataSource } from '@zmodu/db/testing';
import { adminConfigStoreContract } from '../testing/admin-config-store.contract';
import { ZMODU_ADMIN_MIGRATIONS } from './admin-config.migration';
import { TypeOrmAdminConfigStore } from './typeorm-admin-config.store';

adminConfigStoreContract('TypeOrmAdminConfigStore (AdminConfigStore contract)', async () => {
  const { ds, close } = await openTestDataSource({ migrations: ZMODU_ADMIN_MIGRATIONS, migrationsRun: true });
  return { store: new TypeOrmAdminConfigStore(ds), close };
});
