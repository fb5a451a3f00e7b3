import type { DataSourceOptions } from 'typeorm';

export interface SampleAppOptions {
  /** Builds the TypeORM connection options (embedded PGlite or a PostgreSQL server). */
  readonly dataSource: () => Promise<DataSourceOptions>;
  /** HS256 secret that signs and verifies bearer tokens. */
  readonly jwtSecret: string;
  /** Seed the demo desks (tenants acme and globex) at boot. Default true. */
  readonly seed?: boolean;
}

export const SAMPLE_OPTIONS = Symbol('SAMPLE_OPTIONS');
