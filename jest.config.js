/** Jest runs under `node --experimental-vm-modules` (see package.json) so PGlite can load its WASM. */
const moduleNameMapper = {
  '^@zmodu/(guard|skills|agent|db|pipeline|admin)$': '<rootDir>/libs/$1/src',
  '^@zmodu/(guard|skills|agent|db|pipeline|admin)/(.*)$': '<rootDir>/libs/$1/src/$2',
};
const base = {
  rootDir: __dirname,
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  testEnvironment: 'node',
  moduleNameMapper,
};
module.exports = {
  testTimeout: 60000,
  globalSetup: '<rootDir>/test/support/global-setup.js',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts'] },
    {
      ...base,
      displayName: 'db',
      testMatch: ['<rootDir>/libs/**/*.db-spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
    },
  ],
};
