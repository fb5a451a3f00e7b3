import { PgPackageUnavailableException } from './exceptions/pg-package-unavailable.exception';

/** What of `pg` we use, typed here so that no declaration of ours names the package (it may not be installed). */
export interface PgClientInstance {
  on(event: 'error', listener: (err: Error) => void): unknown;
  connect(): Promise<void>;
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}
export interface PgPackage {
  readonly Client: new (config?: object) => PgClientInstance;
}

/**
 * The `pg` package, an optional peer dependency: only a connection to a PostgreSQL server needs it (the embedded
 * database does not). Loaded where such a connection is configured, so that its absence is told at boot, naming the
 * package; never at import.
 */
export function loadPg(feature: string): PgPackage {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('pg') as PgPackage;
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    const missing = e?.code === 'MODULE_NOT_FOUND' && /['"]pg['"]/.test(String(e.message).split('\n')[0]);
    throw new PgPackageUnavailableException(feature, missing, missing ? undefined : String(e?.message).split('\n')[0]);
  }
}
