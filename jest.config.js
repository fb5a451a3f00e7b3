/** Jest runs under `node --experimental-vm-modules` (see package.json) so PGlite can load its WASM. */
// @zmodu/<name> is the library's source, for every library of libs/ (scripts/libraries.js: one list).
const names = require('./scripts/libraries')
  .libraries()
  .map((p) => p.short)
  .join('|');
const moduleNameMapper = {
  [`^@zmodu/(${names})$`]: '<rootDir>/libs/$1/src',
  [`^@zmodu/(${names})/(.*)$`]: '<rootDir>/libs/$1/src/$2',
};
// The TypeScript of the specs and the libraries is compiled by SWC (@swc/jest): a transpiler, not a type checker (lint and the
// build type-check), about ten times faster than ts-jest on this suite. Nest needs the decorators' design-time types
// (decoratorMetadata) and class names (keepClassNames); the rest matches tsconfig.json (ES2022, class fields defined).
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};
const base = {
  rootDir: __dirname,
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  // Nest's log output is held per test and printed only when the test fails (test/support/quiet-environment.js).
  testEnvironment: '<rootDir>/test/support/quiet-environment.js',
  setupFilesAfterEnv: ['<rootDir>/test/support/quiet-logger.js'],
  moduleNameMapper,
  // examples/ and test/fixtures/apps are applications with tests of their own (vitest, jest), run inside them by npm run
  // test:packages.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/fixtures/', '<rootDir>/examples/'],
};
// Which suites a run holds (ZMODU_TEST_SET): `default` is npm test (unit, tooling, the database suites on PGlite and the
// e2e specs; against PostgreSQL too when ZMODU_TEST_DATABASE_URL is set); `quick` is npm run test:quick (the unit specs
// and one e2e spec, for a first look); `browser` (npm run test:browser) and `chaos` (npm run test:chaos) need a browser or
// PostgreSQL servers they start themselves, and run in CI (.ci/run).
const set = process.env.ZMODU_CHAOS === '1' ? 'chaos' : (process.env.ZMODU_TEST_SET ?? 'default');
const sets = {
  default: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts'] },
    // The repository's own tooling (lint, the quiet test environment): no database, so not rerun by test:db.
    { ...base, displayName: 'tooling', testMatch: ['<rootDir>/test/tooling/**/*.spec.ts'] },
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
  ],
  quick: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts'] },
    // One e2e spec: the sample app over HTTP on the embedded database (an agent, the guard, a proposal, an approval).
    { ...base, displayName: 'db', testMatch: ['<rootDir>/test/sample.e2e-spec.ts'] },
  ],
  // The approvals console in headless Chromium (/usr/bin/chromium, playwright-core) against the sample app on PGlite.
  browser: [{ ...base, displayName: 'browser', testMatch: ['<rootDir>/test/**/*.browser-spec.ts'] }],
  // Faults against a PostgreSQL server each spec starts itself.
  chaos: [{ ...base, displayName: 'chaos', testMatch: ['<rootDir>/test/chaos/**/*.chaos-spec.ts'] }],
};
if (!Object.hasOwn(sets, set)) throw new Error(`ZMODU_TEST_SET=${set}: use one of ${Object.keys(sets).join(', ')}`);

module.exports = {
  testTimeout: 60000,
  // Two workers even on two cores (jest's default is one fewer than the cores): most suites wait on a database, a child
  // process or a browser, so two overlap well. JEST_MAX_WORKERS overrides it.
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: sets[set],
};
