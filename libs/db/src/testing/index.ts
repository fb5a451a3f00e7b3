export { createTestDatabase, openTestDataSource, usingPostgres, embeddedTemplate, TEST_DATABASE_URL_ENV } from './test-database';
export type { TestDatabase, TestDatabaseOptions } from './test-database';
