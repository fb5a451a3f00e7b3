import { ZmoduError } from '@zmodu/core';
/**
 * What bounds the database time one caller (a tenant) can hold on a server: a share of slots,
 * settled in the database, and a cancel of a statement whose caller gave up.
 */

/** A share of `limit` slots keyed by `key`: one of them is held by the transaction that took it. */
export interface StatementSlot {
  /** Names the share (e.g. a tenant); each slot is a transaction-level advisory lock on a hash of it. */
  readonly key: string;
  /** Slots of the share across every connection of the server (every instance of the application). */
  readonly limit: number;
}

/**
 * Takes one free slot of a share, or none: `pg_try_advisory_xact_lock` on a 64-bit hash of
 * `<key>:<n>` for n = 1..limit, stopping at the first it gets (EXISTS stops at its first row); it
 * never waits. The lock lasts as long as the transaction: a statement that runs on after its
 * caller gave up (its connection closed, the server not yet at a check for interrupts) keeps
 * its slot until the server really stops it. Every name is schema-qualified ($1 key, $2 limit).
 */
export const TAKE_SLOT_SQL =
  'SELECT EXISTS (SELECT FROM pg_catalog.generate_series(1, $2::pg_catalog.int4) AS s(n) WHERE pg_catalog.pg_try_advisory_xact_lock(' +
  "pg_catalog.hashtextextended($1::pg_catalog.text OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) s.n::pg_catalog.text, 0))) AS taken";

/**
 * The same, as a step of a pipeline: it fails (22012) when no slot is free, so that the server skips
 * the rest of the pipeline. The failing branch is not a constant (the planner would fold a constant
 * error into every run), hence the division by a difference of two equal stable values.
 */
export const TAKE_SLOT_OR_FAIL_SQL = `SELECT CASE WHEN (${TAKE_SLOT_SQL.replace(/^SELECT /, '').replace(/ AS taken$/, '')}) THEN 1 ELSE 1 OPERATOR(pg_catalog./) (pg_catalog.pg_backend_pid() OPERATOR(pg_catalog.-) pg_catalog.pg_backend_pid()) END AS taken`;

/** Every slot of a share was taken: the caller already runs `limit` statements (here or on another instance). */
export class SlotsTakenError extends ZmoduError {
  override readonly code = 'slots_taken';
  constructor(readonly limit: number) {
    super(`all ${limit} statement slots of this caller are taken`);
    this.name = 'SlotsTakenError';
  }
}

/** The part of a pg Client that a cancel request needs. */
export interface CancellableClient {
  readonly processID?: number | null;
  readonly secretKey?: number | null;
  readonly host?: string;
  readonly port?: number;
}

/** How long a cancel request may take to be delivered before its socket is dropped. */
const CANCEL_DELIVERY_MS = 2000;

/**
 * Ask the server to cancel what the backend of `client` runs, as libpq's PQcancel does: a
 * CancelRequest (the backend's pid and secret key) on a connection of its own, so it needs no
 * privilege, no pool connection, and works while the client's own connection is busy or closed.
 * The server cancels at its next check for interrupts. Resolves when the request is delivered (or
 * could not be: a client with no known host, say); never rejects.
 */
export function cancelBackend(client: CancellableClient): Promise<boolean> {
  const { processID, secretKey, host, port } = client;
  if (!processID || secretKey === undefined || secretKey === null || !port) return Promise.resolve(false);
  // pg's own Connection writes the request (the package map exports it, as pg's Client.cancel uses it).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Connection = require('pg/lib/connection') as new () => PgCancelConnection;
  return new Promise((resolve) => {
    const con = new Connection();
    let settled = false;
    const done = (delivered: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      con.stream.destroy();
      resolve(delivered);
    };
    const timer = setTimeout(() => done(false), CANCEL_DELIVERY_MS);
    timer.unref?.();
    con.on('error', () => done(false));
    con.on('connect', () => con.cancel(processID, secretKey));
    // The server closes the connection once it has read the request.
    con.on('end', () => done(true));
    if (host?.startsWith('/')) con.connect(`${host}/.s.PGSQL.${port}`);
    else con.connect(port, host);
  });
}

interface PgCancelConnection {
  stream: { destroy(): void };
  on(event: string, listener: (...args: unknown[]) => void): void;
  connect(portOrPath: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
}
