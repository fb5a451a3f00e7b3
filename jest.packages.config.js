/**
 * npm run test:packages: build and pack every package, install the tarballs into a fresh Nest
 * application outside the repository, compile it with tsc and run it (test/packages.pack-spec.ts).
 * Slow (one npm install), so apart from `npm test`; .ci/run runs it after the build.
 */
module.exports = {
  rootDir: __dirname,
  displayName: 'packages',
  testMatch: ['<rootDir>/test/**/*.pack-spec.ts'],
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  testEnvironment: 'node',
  testTimeout: 900000,
};
