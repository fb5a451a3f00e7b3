import type { DataSourceOptions } from 'typeorm';
import type { EdgeOptions } from './edge/edge.options';

export interface SampleAppOptions {
  /** Builds the TypeORM connection options (embedded PGlite or a PostgreSQL server). */
  readonly dataSource: () => Promise<DataSourceOptions>;
  /** HS256 secret that signs and verifies bearer tokens. */
  readonly jwtSecret: string;
  /** Seed the demo desks (tenants acme and globex) at boot. Default true. */
  readonly seed?: boolean;
  /** Token rules, body limits and the rate limit at the HTTP edge (see EdgeOptions for the defaults). */
  readonly edge?: Partial<EdgeOptions>;
}

export const SAMPLE_OPTIONS = Symbol('SAMPLE_OPTIONS');
