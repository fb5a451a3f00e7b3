/** Jest runs under `node --experimental-vm-modules` (see package.json) so PGlite can load its WASM. */
const moduleNameMapper = {
  '^@zmodu/(guard|skills|data|outbox|memory|agent|db|pipeline|admin|mcp)$': '<rootDir>/libs/$1/src',
  '^@zmodu/(guard|skills|data|outbox|memory|agent|db|pipeline|admin|mcp)/(.*)$': '<rootDir>/libs/$1/src/$2',
};
const base = {
  rootDir: __dirname,
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  // Nest's log output is held per test and printed only when the test fails (test/support/quiet-environment.js).
  testEnvironment: '<rootDir>/test/support/quiet-environment.js',
  setupFilesAfterEnv: ['<rootDir>/test/support/quiet-logger.js'],
  moduleNameMapper,
  // test/fixtures/apps are applications with tests of their own (vitest, jest), run inside them by npm run test:packages.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/fixtures/'],
};
module.exports = {
  testTimeout: 60000,
  // Two workers even on two cores (jest's default is one fewer than the cores): most suites wait on a database, a child
  // process or a browser, so two overlap well. JEST_MAX_WORKERS overrides it.
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts'] },
    // The repository's own tooling (lint, the quiet test environment): no database, so not rerun by test:db.
    { ...base, displayName: 'tooling', testMatch: ['<rootDir>/test/tooling/**/*.spec.ts'] },
    // The approvals console in headless Chromium (/usr/bin/chromium) against the sample app on PGlite: run by npm test,
    // not again by test:db.
    { ...base, displayName: 'browser', testMatch: ['<rootDir>/test/**/*.browser-spec.ts'] },
    {
      ...base,
      displayName: 'db',
      // *.pg-spec.ts need a PostgreSQL server of their own (the outage spec stops and starts it): they run with the
      // database suites against PostgreSQL (ZMODU_TEST_DATABASE_URL set, as in .ci/run).
      testMatch: [
        '<rootDir>/libs/**/*.db-spec.ts',
        '<rootDir>/test/**/*.e2e-spec.ts',
        ...(process.env.ZMODU_TEST_DATABASE_URL ? ['<rootDir>/test/**/*.pg-spec.ts'] : []),
      ],
    },
    // The chaos suite (npm run test:chaos, run by .ci/run): faults against a PostgreSQL server each spec starts itself.
    ...(process.env.ZMODU_CHAOS === '1' ? [{ ...base, displayName: 'chaos', testMatch: ['<rootDir>/test/chaos/**/*.chaos-spec.ts'] }] : []),
  ],
};
