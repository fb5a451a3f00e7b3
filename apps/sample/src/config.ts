import { embeddedDataSourceOptions, openEmbeddedDatabase, serverDataSourceOptions } from '@zmodu/db';
import { SampleAppOptions } from './sample.options';

export const DEV_JWT_SECRET = 'zmodu-development-secret-do-not-use-in-production';

/** Options from the environment: DATABASE_URL (else PGlite in ZMODU_DATA_DIR, default .data/pglite), ZMODU_JWT_SECRET. */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): SampleAppOptions {
  return {
    dataSource: async () => {
      if (env.DATABASE_URL) return serverDataSourceOptions(env.DATABASE_URL);
      const dataDir = env.ZMODU_DATA_DIR || '.data/pglite';
      return embeddedDataSourceOptions(await openEmbeddedDatabase({ dataDir }));
    },
    jwtSecret: jwtSecretFromEnv(env),
  };
}

export function jwtSecretFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const secret = env.ZMODU_JWT_SECRET;
  if (secret) {
    if (secret.length < 32) throw new Error('ZMODU_JWT_SECRET must be at least 32 characters long.');
    return secret;
  }
  if (env.NODE_ENV === 'production') throw new Error('Set ZMODU_JWT_SECRET (32+ characters): there is no default secret in production.');
  // stderr, so that `TOKEN=$(npm run -s token)` captures only the token.
  process.stderr.write('warning: ZMODU_JWT_SECRET is not set: using the development secret. Set it for anything but local development.\n');
  return DEV_JWT_SECRET;
}

export function databaseDescription(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${env.ZMODU_DATA_DIR || '.data/pglite'}`;
}
