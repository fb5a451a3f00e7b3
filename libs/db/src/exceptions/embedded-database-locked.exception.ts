import { ZmoduError } from '@zmodu/core';
/** Who holds the folder, when its lock file says (null when it does not). */
export interface EmbeddedFolderHolder {
  readonly pid: number;
  readonly host: string;
  /** When the holder took the lock (ISO 8601). */
  readonly since: string;
  readonly program: string;
}

/**
 * The embedded database folder is held by another process (or another EmbeddedDatabase of this one): it is not opened.
 * The message names the holder and what to do; `holder` has the same as data.
 */
export class EmbeddedDatabaseLockedException extends ZmoduError {
  constructor(
    message: string,
    readonly dataDir: string,
    readonly lockPath: string,
    readonly holder: EmbeddedFolderHolder | null,
  ) {
    super(message);
    this.name = 'EmbeddedDatabaseLockedException';
  }
}
