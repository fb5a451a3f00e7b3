import { EventEmitter } from 'node:events';
import type { PGlite, Results } from '@electric-sql/pglite';

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
  fields: Results['fields'];
}

/**
 * A `pg`-compatible driver object (`{ Pool }`) for TypeORM's postgres driver over one PGlite instance.
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

export function createPgliteDriver(db: PGlite, options: PgliteDriverOptions = {}): PgCompatibleDriver {
  const closeOnEnd = options.closeOnEnd ?? true;
  const acquireTimeoutMs = options.acquireTimeoutMs ?? 30_000;
  const lock = new SessionLock();
  let ended = false;

  class PgliteClient extends EventEmitter {
    /** pg's forms: (text, values) or ({ name?, text, values }); a statement name is accepted and ignored. */
    query(sql: string | { text: string; values?: unknown[]; name?: string }, params?: unknown[], callback?: Callback): Promise<PgResult> {
      const p = typeof sql === 'object' ? execute(db, sql.text, sql.values) : execute(db, sql, params);
      if (callback) p.then((r) => callback(null, r), (e: Error) => callback(e));
      return p;
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
      if (callback) {
        acquired.then(
          ({ client, release }) => callback(null, client, release),
          (err: Error) => callback(err),
        );
      }
      return acquired.then(({ client }) => client);
    }

    async query(sql: string, params?: unknown[] | Callback, callback?: Callback): Promise<PgResult> {
      if (typeof params === 'function') {
        callback = params;
        params = undefined;
      }
      const unlock = await lock.acquire(acquireTimeoutMs);
      try {
        const r = await execute(db, sql, params as unknown[] | undefined);
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
      done.then(() => callback?.(null), (e: Error) => callback?.(e));
      return done;
    }
  }

  return { Pool: PglitePool, embedded: true };
}

async function execute(db: PGlite, sql: string, params?: unknown[]): Promise<PgResult> {
  if (params && params.length > 0) return toPg(sql, await db.query(sql, params));
  const all = await db.exec(sql);
  const last = all[all.length - 1] ?? { rows: [], fields: [], affectedRows: 0 };
  return toPg(sql, last as Results);
}

function toPg(sql: string, r: Results): PgResult {
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
