/**
 * The messages of @zmodu/db's exceptions: each says what is wrong and what to do about it.
 * One factory per message, so that a message is written once.
 */

/** Who holds an embedded database folder, as its lock file tells. */
export interface FolderHolderDescription {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
  readonly program: string;
}

const ONE_PROCESS =
  'One process at a time may open an embedded database folder (two processes writing one folder corrupt it). ' +
  'To use the data from several processes (the app and the zmodu CLI, say), run them on a PostgreSQL server instead ' +
  '(DATABASE_URL=postgres://... for the app, "database": { "url": "postgres://..." } for the CLI).';

/**
 * The PGlite release that wrote a folder of a PostgreSQL major, with the pglite-tools release whose pgDump reads it:
 * PostgreSQL 17 is what @zmodu/db embedded before PGlite 0.5 (the pair tried on such a folder).
 */
const DUMP_WITH: Readonly<Record<string, string>> = {
  '17': '@electric-sql/pglite@0.3.16 with @electric-sql/pglite-tools@0.2.21',
};

export const DbMessages = {
  folderVersion: (dir: string, found: string, embedded: string) =>
    `The embedded database folder ${dir} holds data of PostgreSQL ${found}, and this @zmodu/db embeds PostgreSQL ${embedded}, ` +
    `which cannot open a folder of another major version (the folder was not changed). To keep the data, dump it with the ` +
    `PGlite that wrote it (${Object.hasOwn(DUMP_WITH, found) ? DUMP_WITH[found] : `the @electric-sql/pglite release that runs PostgreSQL ${found}`}: ` +
    `pgDump from @electric-sql/pglite-tools/pg_dump, in a folder of its own) and load the dump into a new folder with this ` +
    `version ("Upgrading the embedded database" in docs/upgrading.md shows both steps). To start over without the data, delete ${dir}.`,

  folderInUse: (dir: string, holder: FolderHolderDescription, lockPath: string) =>
    `The embedded database folder ${dir} is in use by process ${holder.pid} (${holder.program}) on ${holder.host} since ${holder.since}. ` +
    `Stop that process first. ${ONE_PROCESS} If no process ${holder.pid} of that program runs on ${holder.host}, delete ${lockPath}.`,
  folderInUseHere: (dir: string, since: string) =>
    `The embedded database folder ${dir} is open in this process already (since ${since}): close that EmbeddedDatabase ` +
    `before opening the folder again, or share the one instance (its DataSource). ${ONE_PROCESS}`,
  folderTakeOverBusy: (dir: string, holder: FolderHolderDescription) =>
    `The embedded database folder ${dir} is being taken over by process ${holder.pid} (${holder.program}) on ${holder.host}, ` +
    `whose start found the folder's lock left by a process that had ended. Try again once it is open, or stop it. ${ONE_PROCESS}`,
  folderOpening: (dir: string) =>
    `The embedded database folder ${dir} is being opened by another process right now (it holds the folder's OS-level lock). ` +
    `Stop that process first. ${ONE_PROCESS}`,
  folderLockUnreadable: (dir: string, lockPath: string) =>
    `The embedded database folder ${dir} has a lock file ${lockPath} that does not say which process holds it ` +
    `(it is not a lock this version wrote). If no process uses the folder, delete ${lockPath}. ${ONE_PROCESS}`,
  folderLockLost: (dir: string, lockPath: string) =>
    `The embedded database folder ${dir} is no longer locked by this process (its lock file ${lockPath} was removed or ` +
    `replaced), so it is not reopened: another process may have it open now. Restart this process once the other is gone.`,
};
