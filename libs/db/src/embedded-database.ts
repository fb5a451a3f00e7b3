import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DbMessages } from './db.messages';
import { FolderLock } from './embedded/folder-lock';
import { EmbeddedDatabaseVersionException } from './exceptions/embedded-database-version.exception';
import { PGLITE_WORKER_SOURCE } from './embedded/worker-source';
import type { StatementSlot } from './statement-bounds';
import { timerDelay } from './timer-delay';

export interface EmbeddedDatabaseOptions {
  /**
   * Folder of the data; omitted: a temporary folder, removed by `close()` (data that lasts as long as the process). One
   * process at a time opens a folder: a second opener gets EmbeddedDatabaseLockedException naming the holder.
   */
  readonly dataDir?: string;
  /** A `dumpDataDir()` tarball to start from (skips initdb: much faster, for tests). Used by the first start only. */
  readonly loadDataDir?: Blob | File;
}

/** A result as PGlite gives it: rows as objects, the fields, and the rows a write touched. */
export interface EmbeddedResult {
  readonly rows: Array<Record<string, unknown>>;
  readonly fields: Array<{ name: string; dataTypeID: number }>;
  readonly affectedRows?: number;
}

/** One statement in one READ ONLY transaction that is always rolled back (see `EmbeddedDatabase.readOnly`). */
export interface ReadOnlyRequest {
  /** The statement; it runs over the extended protocol, so it is one statement, whatever its text. */
  readonly text: string;
  readonly values: readonly unknown[];
  /** The deadline: past it, the statement is stopped and the call fails with code 57014 (`timeout`). */
  readonly timeoutMs: number;
  /** `SET LOCAL ROLE` to this role before the statement (its name, unquoted). */
  readonly role?: string;
  /** Transaction-local settings (`set_config(name, value, true)`) made before the statement. */
  readonly settings?: Readonly<Record<string, string>>;
  /** Bytes of rows to take at most; rows past it are left (and `truncated` set), so huge rows never pile up in memory. */
  readonly maxBytes?: number;
  /**
   * After the ROLLBACK, release every session-level advisory lock of the session (`pg_advisory_unlock_all()`, as the
   * session's own role): a lock a statement took survives the rollback and would stay with a pooled connection.
   */
  readonly releaseSessionLocks?: boolean;
  /**
   * On a server, take one slot of this share first (see TAKE_SLOT_SQL); none free: the statement does not run and the call
   * fails with SlotsTakenError. The embedded database has one session, running one statement at a time: ignored there.
   */
  readonly slot?: StatementSlot;
  /**
   * The caller gave up: on a server, the statement is cancelled there (a CancelRequest) and the call fails with 57014. On the
   * embedded database, a statement not yet started does not start; one running runs on to its deadline (stopping it
   * restarts the database, which costs every caller more than the rest of its deadline).
   */
  readonly signal?: AbortSignal;
}

export interface ReadOnlyResult {
  readonly rows: Array<Record<string, unknown>>;
  readonly fields: string[];
  /** Rows were left out because they passed `maxBytes`. */
  readonly truncated?: boolean;
}

/** An error of the embedded database, shaped like pg's DatabaseError (a `code` with the SQLSTATE). */
export class EmbeddedDatabaseError extends Error {
  code?: string;
  severity?: string;
  detail?: string;
  constructor(fields: Record<string, unknown>) {
    super(String(fields.message ?? 'embedded database error'));
    this.name = 'EmbeddedDatabaseError';
    Object.assign(this, fields);
  }
}

/**
 * The PostgreSQL major that the installed PGlite runs (0.5: PostgreSQL 18). A folder whose PG_VERSION names another is
 * refused before PGlite touches it (PGlite 0.5 fails on one with only 'PGlite failed to initialize properly'). A spec
 * checks it against the running server's version, so that an upgrade of PGlite to another major fails there first.
 */
export const EMBEDDED_POSTGRES_MAJOR = '18';

/** The major version a data folder was made by (its PG_VERSION), or undefined for a new or empty folder. */
function folderMajor(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** After a reopen failed (a full disk, say), calls fail at once with its error for this long before the next try. */
const REOPEN_BACKOFF_MS = 2000;

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

/**
 * PostgreSQL in WASM (PGlite), run in a worker thread of its own so that a statement never
 * blocks the app's event loop, and so that a statement can be stopped: PGlite cannot interrupt
 * a running statement, so at a request's deadline the worker is terminated, the caller gets
 * `57014` (statement timeout), and the database is reopened from its folder (PostgreSQL's crash
 * recovery replays what was committed; nothing committed is lost). Requests wait while it reopens.
 *
 * It has a single session: use it through the TypeORM driver of `embeddedDataSourceOptions`,
 * which hands the session to one caller at a time.
 *
 * A folder is opened by one process at a time (FolderLock: a lock file beside it with the holder's pid, and an OS-level
 * lock), taken before PGlite opens it and checked again before every reopen; `close()` and the process's exit release it.
 */
export class EmbeddedDatabase {
  private worker?: Worker;
  private starting?: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing = false;
  private loadDataDir?: ArrayBuffer;
  private restartCount = 0;
  private pid = 0;
  /** The last failed (re)open and until when calls fail with its error instead of trying again. */
  private openFailure?: { readonly error: Error; readonly until: number };

  private constructor(
    private readonly dataDir: string,
    private readonly temporary: boolean,
    private readonly lock?: FolderLock,
  ) {}

  /** Open (or create) the database; with no `dataDir`, in a temporary folder that `close()` removes. */
  static async open(options: EmbeddedDatabaseOptions = {}): Promise<EmbeddedDatabase> {
    let dataDir: string;
    let temporary = false;
    let lock: FolderLock | undefined;
    if (options.dataDir) {
      dataDir = resolve(options.dataDir);
      mkdirSync(dataDir, { recursive: true });
      // Before PGlite touches the folder: a second process on it would corrupt it.
      lock = await FolderLock.acquire(dataDir);
      const found = folderMajor(dataDir);
      if (found !== undefined && found !== EMBEDDED_POSTGRES_MAJOR) {
        await lock.release();
        throw new EmbeddedDatabaseVersionException(
          DbMessages.folderVersion(dataDir, found, EMBEDDED_POSTGRES_MAJOR),
          dataDir,
          found,
          EMBEDDED_POSTGRES_MAJOR,
        );
      }
    } else {
      // A folder of its own that no other process knows: nothing to lock.
      dataDir = mkdtempSync(join(tmpdir(), 'zmodu-pglite-'));
      temporary = true;
    }
    const db = new EmbeddedDatabase(dataDir, temporary, lock);
    try {
      if (options.loadDataDir) db.loadDataDir = await options.loadDataDir.arrayBuffer();
      await db.ensureStarted();
    } catch (err) {
      await lock?.release();
      if (temporary) rmSync(dataDir, { recursive: true, force: true });
      throw err;
    }
    return db;
  }

  get closed(): boolean {
    return this.closing;
  }

  /** The backend pid of the session (as `pg_backend_pid()` reports it). */
  get processId(): number {
    return this.pid;
  }

  /** How many times the worker was restarted (after a deadline or a crash). */
  get restarts(): number {
    return this.restartCount;
  }

  /** One statement with bind parameters, over the extended protocol. */
  query(sql: string, params: readonly unknown[] = [], options: { timeoutMs?: number } = {}): Promise<EmbeddedResult> {
    return this.call('query', { sql, params }, options.timeoutMs) as Promise<EmbeddedResult>;
  }

  /** A script of trusted statements (simple protocol; no parameters): one result per statement. */
  exec(sql: string): Promise<EmbeddedResult[]> {
    return this.call('exec', { sql }) as Promise<EmbeddedResult[]>;
  }

  /**
   * BEGIN READ ONLY, the settings, SET LOCAL ROLE, the statement, ROLLBACK, all in the worker in
   * one request; every statement over the extended protocol. At `timeoutMs` the worker is stopped.
   */
  readOnly(request: ReadOnlyRequest): Promise<ReadOnlyResult> {
    const { text, values, role, settings, maxBytes, releaseSessionLocks, signal } = request;
    if (signal?.aborted) return Promise.reject(cancelled());
    const payload = { text, values, role, settings, maxBytes, releaseSessionLocks };
    return this.call('readOnly', payload, request.timeoutMs, signal) as Promise<ReadOnlyResult>;
  }

  /** The data folder as a gzipped tarball (for `loadDataDir`). */
  async dumpDataDir(): Promise<Blob> {
    const bytes = (await this.call('dump', {})) as Uint8Array;
    return new Blob([bytes]);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    try {
      // A restart in progress finishes first (its worker, once ready, is closed here like any other).
      await this.starting?.catch(() => undefined);
      if (this.worker) await this.send('close', {}).catch(() => undefined);
    } finally {
      const worker = this.worker;
      this.worker = undefined;
      // Held while it stops: a process with nothing else to do would otherwise end before close() releases the folder.
      worker?.ref();
      await worker?.terminate();
      this.failAll(new Error('The embedded database is closed.'));
      if (this.temporary) rmSync(this.dataDir, { recursive: true, force: true });
      await this.lock?.release();
    }
  }

  // ---------------------------------------------------------------- the worker

  private async call(op: string, payload: Record<string, unknown>, timeoutMs?: number, signal?: AbortSignal): Promise<unknown> {
    if (this.closing)
      throw new EmbeddedDatabaseError({
        message: 'The embedded database is closed: open it again with openEmbeddedDatabase().',
        code: '57P01',
      });
    await this.ensureStarted();
    // Its caller left while the database reopened: the statement does not start.
    if (signal?.aborted) throw cancelled();
    return this.send(op, payload, timeoutMs);
  }

  private send(op: string, payload: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error('The embedded database is not running.'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const entry: Pending = { resolve, reject };
      if (timeoutMs !== undefined) {
        entry.timer = setTimeout(() => this.interrupt(id, timeoutMs), timerDelay(timeoutMs));
      }
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, entry);
      worker.postMessage({ id, op, ...payload });
    });
  }

  private ensureStarted(): Promise<void> {
    if (this.worker) return Promise.resolve();
    const failed = this.openFailure;
    if (!this.starting && failed && Date.now() < failed.until) return Promise.reject(failed.error);
    this.starting ??= this.startOrBackOff().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /**
   * Start the worker; if it does not open (on a full disk PGlite aborts in its crash recovery), calls fail with that
   * error for REOPEN_BACKOFF_MS before the next try: each try loads PGlite anew (seconds of CPU), and every caller in
   * the session's line would otherwise make one after the other, each waiting for the last.
   */
  private async startOrBackOff(): Promise<void> {
    try {
      await this.start();
      this.openFailure = undefined;
    } catch (err) {
      this.openFailure = { error: err as Error, until: Date.now() + REOPEN_BACKOFF_MS };
      throw err;
    }
  }

  private async start(): Promise<void> {
    // Every (re)open of the folder is made under its lock: one removed by hand is taken again, one another process holds
    // now is not, and the folder stays closed here (57P03: the database is away) until that process is gone.
    if (this.lock && !(await this.lock.reassert()))
      throw new EmbeddedDatabaseError({ code: '57P03', message: DbMessages.folderLockLost(this.lock.dir, this.lock.lockPath) });
    if (this.closing) throw new Error('The embedded database is closed.');
    const load = this.loadDataDir;
    const worker = new Worker(PGLITE_WORKER_SOURCE, {
      eval: true,
      workerData: { from: __filename, dataDir: this.dataDir, loadDataDir: load },
    });
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on(
        'message',
        (m: {
          id?: number;
          ready?: boolean;
          pid?: number;
          ok?: boolean;
          fatal?: boolean;
          result?: unknown;
          error?: Record<string, unknown>;
        }) => {
          if (!ready && m.ready !== undefined) {
            if (!m.ready) {
              void worker.terminate();
              // Without a SQLSTATE of its own, 57P03 (cannot_connect_now): callers treat it as a database that is away.
              return reject(
                new EmbeddedDatabaseError({
                  code: '57P03',
                  ...m.error,
                  message: `The embedded database did not open: ${m.error?.message}`,
                }),
              );
            }
            ready = true;
            this.pid = m.pid ?? 0;
            if (this.closing && !this.worker) {
              // close() came while it opened: it must not live on with the folder open.
              void worker.terminate();
              return reject(new Error('The embedded database is closed.'));
            }
            this.worker = worker;
            this.loadDataDir = undefined; // a restart opens the folder as it is now
            worker.unref();
            return resolve();
          }
          this.settle(m.id!, m.ok === true, m.ok ? m.result : m.error);
          if (m.fatal && this.worker === worker) this.restart('The embedded database was restarted after a statement broke it.');
        },
      );
      worker.on('error', (err) => {
        // The worker died (a WASM abort, say): fail what it held; the next request starts it again.
        if (!ready) return reject(err);
        if (this.worker === worker) {
          this.worker = undefined;
          this.restartCount++;
          this.failAll(
            new EmbeddedDatabaseError({
              message: `The embedded database stopped (${err.message}); it is reopened on the next request.`,
              code: '57P01',
            }),
          );
        }
      });
      worker.on('exit', (code) => {
        if (!ready) return reject(new Error(`The embedded database worker exited (${code}) before it opened.`));
        if (this.worker === worker) {
          this.worker = undefined;
          this.restartCount++;
          this.failAll(
            new EmbeddedDatabaseError({ message: 'The embedded database stopped; it is reopened on the next request.', code: '57P01' }),
          );
        }
      });
    });
  }

  private settle(id: number, ok: boolean, value: unknown): void {
    const entry = this.pending.get(id);
    if (!entry) return; // answered already (its deadline passed)
    this.pending.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    if (this.pending.size === 0) this.worker?.unref();
    if (ok) entry.resolve(value);
    else entry.reject(new EmbeddedDatabaseError(value as Record<string, unknown>));
  }

  /** A request passed its deadline: answer it with a timeout now, stop the worker, reopen the folder. */
  private interrupt(id: number, timeoutMs: number): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    entry.reject(
      new EmbeddedDatabaseError({
        message: `canceling statement due to statement timeout (${timeoutMs} ms; the embedded database was restarted to stop it)`,
        code: '57014',
      }),
    );
    this.restart('The embedded database was restarted to stop a statement past its deadline.');
  }

  /** Stop the worker, fail what it held, and reopen the folder; requests that come meanwhile wait for it. */
  private restart(reason: string): void {
    const worker = this.worker;
    this.worker = undefined;
    this.restartCount++;
    this.failAll(new EmbeddedDatabaseError({ message: reason, code: '57P01' }));
    this.starting = (async () => {
      await worker?.terminate();
      if (!this.closing) await this.startOrBackOff();
    })().finally(() => {
      this.starting = undefined;
    });
    this.starting.catch(() => undefined);
  }

  private failAll(err: Error): void {
    for (const [id, entry] of this.pending) {
      this.pending.delete(id);
      if (entry.timer) clearTimeout(entry.timer);
      entry.reject(err);
    }
  }
}

/** A statement whose caller gave up before it started, shaped like the server's answer to a cancel (57014). */
function cancelled(): EmbeddedDatabaseError {
  return new EmbeddedDatabaseError({
    message: 'canceling statement due to user request (its caller gave up before it started)',
    code: '57014',
  });
}

/**
 * Open an embedded database (PGlite in a worker thread) with the parsers `pg` uses (int8 and
 * numeric as strings), so that code behaves the same on it and on a PostgreSQL server.
 */
export function openEmbeddedDatabase(options: EmbeddedDatabaseOptions = {}): Promise<EmbeddedDatabase> {
  return EmbeddedDatabase.open(options);
}
