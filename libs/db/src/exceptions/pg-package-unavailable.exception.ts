import { ZmoduError } from '@zmodu/core';
/**
 * A connection to a PostgreSQL server was configured (serverDataSourceOptions, a server test database) and the `pg`
 * package, an optional peer dependency of @zmodu/db (an application on the embedded database does not need it), is not
 * installed, or failed to load. Thrown where the connection is configured: at boot.
 */
export class PgPackageUnavailableException extends ZmoduError {
  constructor(
    readonly feature: string,
    /** The package is not installed (false: it is, and failed to load; the message quotes why). */
    readonly missing: boolean,
    reason?: string,
  ) {
    super(
      missing
        ? `${feature} needs the pg package (PostgreSQL's client, an optional peer of @zmodu/db): npm install pg@^8.16.0`
        : `${feature} needs the pg package, which is installed but failed to load (${reason}): reinstall it (npm install pg@^8.16.0)`,
    );
    this.name = 'PgPackageUnavailableException';
  }
}
