import { adminConfigStoreContract } from '../testing/admin-config-store.contract';
import { InMemoryAdminConfigStore } from './in-memory-admin-config.store';

adminConfigStoreContract('InMemoryAdminConfigStore (AdminConfigStore contract)', async () => ({ store: new InMemoryAdminConfigStore() }));
