import { EventEmitter } from 'node:events';
import type { EmbeddedDatabase, EmbeddedResult, ReadOnlyRequest, ReadOnlyResult } from './embedded-database';

export interface PgliteDriverOptions {
  /** Close the PGlite instance when TypeORM ends its pool (DataSource.destroy). Default true. */
  readonly closeOnEnd?: boolean;
  /** How long a caller waits for the single session before a clear error (ms). Default 30000. */
  readonly acquireTimeoutMs?: number;
}

type Callback = (err: Error | null, result?: unknown) => void;

/** pg-shaped result for TypeORM's postgres driver. */
interface PgResult {
  rows: unknown[];
  rowCount: number;
  command: string;
  fields: EmbeddedResult['fields'];
}

/** pg's query config: a statement name is accepted and ignored; `queryMode: 'extended'` forces the extended protocol. */
interface QueryConfig {
  text: string;
  values?: unknown[];
  name?: string;
  queryMode?: 'extended';
}

/** The raw connection of the embedded driver, as TypeORM's `queryRunner.connect()` returns it. */
export interface EmbeddedConnection {
  readonly embedded: true;
  /** The backend pid of the session, as pg's Client has it. */
  readonly processID: number;
  query(sql: string | QueryConfig, params?: unknown[]): Promise<PgResult>;
  /** One statement in a READ ONLY transaction that is always rolled back, with a deadline that holds. */
  readOnly(request: ReadOnlyRequest): Promise<ReadOnlyResult>;
}

export function isEmbeddedConnection(conn: unknown): conn is EmbeddedConnection {
  return (
    typeof conn === 'object' &&
    conn !== null &&
    (conn as { embedded?: unknown }).embedded === true &&
    typeof (conn as EmbeddedConnection).readOnly === 'function'
  );
}

/**
 * A `pg`-compatible driver object (`{ Pool }`) for TypeORM's postgres driver over one embedded database.
 *
 * PGlite has a single session, so the pool hands out one connection at a time: a query runner
 * (and the transaction it holds) has the session to itself until it is released. Everyone else
 * waits in line; a wait longer than `acquireTimeoutMs` fails with an error saying why (usually a
 * query made outside a transaction's own EntityManager while that transaction is open).
 */
/** What TypeORM's postgres driver needs of a `driver`: a pg-style Pool class. */
export interface PgCompatibleDriver {
  readonly Pool: new (options?: unknown) => EventEmitter;
  /** Marks the embedded database: statements cannot be interrupted there (no statement_timeout). */
  readonly embedded: true;
}

export function createPgliteDriver(db: EmbeddedDatabase, options: PgliteDriverOptions = {}): PgCompatibleDriver {
  const closeOnEnd = options.closeOnEnd ?? true;
  const acquireTimeoutMs = options.acquireTimeoutMs ?? 30_000;
  const lock = new SessionLock();
  let ended = false;

  class PgliteClient extends EventEmitter implements EmbeddedConnection {
    readonly embedded = true as const;

    get processID(): number {
      return db.processId;
    }

    /** pg's forms: (text, values) or ({ name?, text, values, queryMode? }). */
    query(sql: string | QueryConfig, params?: unknown[], callback?: Callback): Promise<PgResult> {
      const p = typeof sql === 'object' ? execute(db, sql.text, sql.values, sql.queryMode === 'extended') : execute(db, sql, params, false);
      if (callback)
        p.then(
          (r) => callback(null, r),
          (e: Error) => callback(e),
        );
      return p;
    }

    readOnly(request: ReadOnlyRequest): Promise<ReadOnlyResult> {
      return db.readOnly(request);
    }
  }

  class PglitePool extends EventEmitter {
    constructor(_options?: unknown) {
      super();
    }

    connect(callback?: (err: Error | null, client?: PgliteClient, release?: (err?: unknown) => void) => void): Promise<PgliteClient> {
      const acquired = ended
        ? Promise.reject(new Error('PGlite pool has ended'))
        : lock.acquire(acquireTimeoutMs).then((unlock) => {
            const client = new PgliteClient();
            let released = false;
            const release = () => {
              if (released) return;
              released = true;
              unlock();
            };
            return { client, release };
          });
      const result = acquired.then(({ client }) => client);
      if (callback) {
        acquired.then(
          ({ client, release }) => callback(null, client, release),
          (err: Error) => callback(err),
        );
        // The callback has the error (pg returns nothing in callback mode): the returned promise must
        // not also reject unhandled, which would crash the process when the database is down or busy.
        result.catch(() => undefined);
      }
      return result;
    }

    async query(sql: string, params?: unknown[] | Callback, callback?: Callback): Promise<PgResult> {
      if (typeof params === 'function') {
        callback = params;
        params = undefined;
      }
      const unlock = await lock.acquire(acquireTimeoutMs);
      try {
        const r = await execute(db, sql, params as unknown[] | undefined, false);
        callback?.(null, r);
        return r;
      } catch (err) {
        callback?.(err as Error);
        throw err;
      } finally {
        unlock();
      }
    }

    end(callback?: (err?: Error | null) => void): Promise<void> {
      ended = true;
      const done = (async () => {
        if (!closeOnEnd) return;
        const unlock = await lock.acquire(acquireTimeoutMs);
        try {
          if (!db.closed) await db.close();
        } finally {
          unlock();
        }
      })();
      done.then(
        () => callback?.(null),
        (e: Error) => callback?.(e),
      );
      return done;
    }
  }

  return { Pool: PglitePool, embedded: true };
}

/** With parameters (or when asked), one statement over the extended protocol; else a trusted script, as pg's simple protocol. */
async function execute(db: EmbeddedDatabase, sql: string, params: unknown[] | undefined, extended: boolean): Promise<PgResult> {
  if (extended || (params && params.length > 0)) return toPg(sql, await db.query(sql, params ?? []));
  const all = await db.exec(sql);
  const last = all[all.length - 1] ?? { rows: [], fields: [], affectedRows: 0 };
  return toPg(sql, last);
}

function toPg(sql: string, r: EmbeddedResult): PgResult {
  const command = firstKeyword(sql);
  const rowCount = command === 'SELECT' ? r.rows.length : (r.affectedRows ?? r.rows.length);
  return { rows: r.rows, rowCount, command, fields: r.fields };
}

function firstKeyword(sql: string): string {
  const m = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)/.exec(sql);
  return m ? m[1].toUpperCase() : '';
}

/** A FIFO lock: one holder of the PGlite session at a time. */
class SessionLock {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;

  acquire(timeoutMs: number): Promise<() => void> {
    let unlockNext!: () => void;
    const next = new Promise<void>((resolve) => (unlockNext = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => next);
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        reject(
          new Error(
            `Waited ${timeoutMs} ms for the embedded database session (PGlite has one session). ` +
              `Something holds it: most often a query made outside a transaction's own EntityManager while that transaction is open.`,
          ),
        );
      }, timeoutMs);
      timer.unref?.();
      void previous.then(() => {
        clearTimeout(timer);
        if (timedOut) {
          unlockNext();
          return;
        }
        this.holders++;
        resolve(() => {
          this.holders--;
          unlockNext();
        });
      });
    });
  }
}
