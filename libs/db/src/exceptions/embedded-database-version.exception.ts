import { ZmoduError } from '@zmodu/core';
/**
 * The embedded database folder holds data of another PostgreSQL major version than the one embedded (PGlite runs one
 * major; PostgreSQL cannot open a data folder of another major). Nothing in the folder was changed. The message says how
 * to carry the data over (a dump with the PGlite that wrote it, loaded into a new folder) or to start over.
 */
export class EmbeddedDatabaseVersionException extends ZmoduError {
  constructor(
    message: string,
    readonly dataDir: string,
    /** The major version the folder's PG_VERSION names (e.g. '17'). */
    readonly folderVersion: string,
    /** The major version of the embedded PostgreSQL (e.g. '18'). */
    readonly embeddedVersion: string,
  ) {
    super(message);
    this.name = 'EmbeddedDatabaseVersionException';
  }
}
