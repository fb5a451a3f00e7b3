import type { ReadOnlyRequest, ReadOnlyResult } from './embedded-database';
import { timerDelay } from './timer-delay';
import { isEmbeddedConnection } from './pglite-driver';
import { cancelBackend, CancellableClient, SlotsTakenError, TAKE_SLOT_OR_FAIL_SQL } from './statement-bounds';

/**
 * pg's own row parser and value serializer (both exported by pg's package map), loaded at the first statement on a
 * server: `pg` is an optional peer, which a server connection has (the embedded database never comes here).
 */
let pgInternals: { readonly PgResult: new () => PgResultInternal; readonly prepareValue: (v: unknown) => unknown } | undefined;
function pgInternal(): NonNullable<typeof pgInternals> {
  return (pgInternals ??= {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    PgResult: require('pg/lib/result') as new () => PgResultInternal,
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    prepareValue: (require('pg/lib/utils') as { prepareValue: (v: unknown) => unknown }).prepareValue,
  });
}

interface PgResultInternal {
  rows: Array<Record<string, unknown>>;
  fields: Array<{ name: string }>;
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): Record<string, unknown>;
  addRow(row: Record<string, unknown>): void;
}

/** The part of pg's Connection a submittable writes to. */
interface PgConnection {
  stream: { cork?: () => void; uncork?: () => void };
  close(c: { type: 'S'; name: string }): void;
  parse(q: { text: string; name: string; types: number[] }): void;
  bind(c: { portal: string; statement: string; values: readonly unknown[]; valueMapper: (v: unknown) => unknown }): void;
  describe(c: { type: 'P'; name: string }): void;
  execute(c: { portal: string; rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

interface PgClientLike extends CancellableClient {
  query(submittableOrText: unknown): Promise<unknown> | unknown;
  on?(event: 'error', listener: (err: Error) => void): void;
  end?(): Promise<void>;
  readyForQuery?: boolean;
  connection?: { on(event: string, listener: () => void): void; off(event: string, listener: () => void): void };
}

/** How long past its deadline a statement may run on a server before its connection is closed. */
export const HARD_DEADLINE_GRACE_MS = 1000;

export type { ReadOnlyRequest, ReadOnlyResult };

/**
 * Run one statement in a READ ONLY transaction that is always rolled back, on a raw driver
 * connection (what TypeORM's `queryRunner.connect()` returns): a `pg` client or the embedded
 * database's. Every statement goes over the extended protocol (the statement is one statement,
 * whatever its text). On a server the steps are pipelined: BEGIN, the slot (when asked), the
 * settings and the role (one statement), the statement, ROLLBACK and the release of session
 * advisory locks (when asked) are written at once and answered after one Sync, so the whole run
 * is one round trip (a second one only after an error). Our own steps are named statements,
 * parsed once per connection, with every name schema-qualified. The deadline is the server's
 * `statement_timeout`; on the embedded database, the worker is stopped at it. A caller that gives
 * up (`signal`, or the hard deadline below) has the statement cancelled on the server.
 */
export async function runReadOnlyStatement(connection: unknown, request: ReadOnlyRequest): Promise<ReadOnlyResult> {
  if (isEmbeddedConnection(connection)) return connection.readOnly(request);
  if (request.signal?.aborted) throw canceled('its caller gave up before it started');
  const client = connection as PgClientLike;
  const prepared = preparedOn(connection);
  const run = new ReadOnlyPipeline(request, prepared);
  const close = () => {
    // end() marks the client as ending at once (the pool drops it when it is released) and, with a
    // query in flight, closes the socket without raising an error event.
    client.on?.('error', () => undefined);
    client.end?.().catch(() => undefined);
  };
  // The caller is told now; the server is told to stop (a closed socket alone stops a backend only when it next writes),
  // and the connection is closed: a cancel that arrived late would hit whatever the connection ran next.
  const giveUp = (why: string) => {
    void cancelBackend(client);
    run.abandon(canceled(why));
    close();
  };
  // Rows past the byte budget: answer with what fits, and stop the server sending the rest.
  run.onFull = () => {
    run.abandon(null, run.partial());
    close();
  };
  client.query(run);
  // statement_timeout acts only where the server checks for interrupts: a C function deep in one
  // expression (upper(upper(... lpad(x, 50000000)))) does not. Past the deadline and a grace, the
  // caller gets its timeout, the server a cancel and the connection is closed, so that neither it nor the pool waits.
  const hard = setTimeout(
    () => giveUp(`the server did not stop within ${HARD_DEADLINE_GRACE_MS} ms of its statement timeout; the connection was closed`),
    timerDelay(request.timeoutMs + HARD_DEADLINE_GRACE_MS),
  );
  const onAbort = () => giveUp('its caller gave up; the server was asked to cancel it and the connection was closed');
  request.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await run.done;
  } catch (err) {
    if (run.abandoned) throw err; // the connection is gone: nothing to roll back

    // The server skipped the rest up to Sync: the transaction, if BEGIN ran, is aborted, and which of
    // our statements got parsed is unknown. pg sends this after the pipeline's ReadyForQuery, ahead of
    // anything the connection's next user sends: ROLLBACK, Close of our statements (harmless when absent)
    // and, when asked, the release of session advisory locks.
    const names = [...prepared];
    prepared.clear();
    await afterPipeline(client);
    const cleanup = new Cleanup(names, request.releaseSessionLocks === true);
    client.query(cleanup);
    await cleanup.done.catch(() => undefined);
    throw err;
  } finally {
    clearTimeout(hard);
    request.signal?.removeEventListener('abort', onAbort);
  }
}

/** 57014 (query_canceled), as the server answers a statement timeout or a cancel. */
function canceled(why: string): Error {
  return Object.assign(new Error(`canceling statement (${why})`), { code: '57014' });
}

/**
 * pg completes a query at its first error, before the server's ReadyForQuery: wait for that (or for
 * the connection to end) before sending anything more, as pg expects.
 */
function afterPipeline(client: PgClientLike): Promise<void> {
  if (client.readyForQuery !== false || !client.connection) return Promise.resolve();
  const connection = client.connection;
  return new Promise((resolve) => {
    const done = () => {
      connection.off('readyForQuery', done);
      connection.off('end', done);
      resolve();
    };
    connection.on('readyForQuery', done);
    connection.on('end', done);
  });
}

/** Names of our own statements parsed on each connection (named prepared statements live as long as the session). */
const parsedOn = new WeakMap<object, Set<string>>();

function preparedOn(connection: unknown): Set<string> {
  let set = parsedOn.get(connection as object);
  if (!set) parsedOn.set(connection as object, (set = new Set()));
  return set;
}

interface Step {
  readonly text: string;
  readonly values: readonly unknown[];
  /** Our own fixed statements are named, parsed once per connection; the caller's statement is unnamed. */
  readonly name?: string;
}

/** What pg calls on a submittable (the interface pg-cursor uses); handlers with nothing to do stay empty. */
abstract class Submittable<T> {
  callback?: (err: Error | null, result?: T) => void;
  readonly done: Promise<T>;
  private settled = false;

  constructor() {
    this.done = new Promise((resolve, reject) => {
      this.callback = (err, result) => (err ? reject(err) : resolve(result as T));
    });
  }

  abstract submit(connection: PgConnection): null;

  handleRowDescription(_msg: { fields: unknown[] }): void {}

  handleDataRow(_msg: { fields: unknown[] }): void {}

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: PgConnection): void {
    connection.sendCopyFail('COPY is not allowed here');
  }

  handleCopyData(): void {}

  /** pg completes a query at its first error (the server skips the rest up to Sync). */
  handleError(err: Error): void {
    this.finish(err);
  }

  abstract handleReadyForQuery(): void;

  protected finish(err: Error | null, result?: T): void {
    if (this.settled) return;
    this.settled = true;
    this.callback?.(err, result);
  }
}

/** A pg submittable (the interface pg-cursor uses) that writes several extended-protocol statements and one Sync. */
class ReadOnlyPipeline extends Submittable<ReadOnlyResult> {
  /** pg gives this result its type parsers (the client's own) before the run is submitted. */
  readonly _result: PgResultInternal = new (pgInternal().PgResult)();
  private readonly steps: Step[] = [];
  private readonly statementStep: number;
  private readonly slotStep: number;
  private readonly unlockStep: number;
  private readonly slotLimit: number;
  private step = 0;
  private failed?: Error;
  private bytes = 0;
  private full = false;
  private readonly maxBytes?: number;
  /** Called once when the rows pass the byte budget. */
  onFull?: () => void;
  /** Set when the run was given up (hard deadline, byte budget): its connection is closed. */
  abandoned = false;

  constructor(
    request: ReadOnlyRequest,
    private readonly prepared: Set<string>,
  ) {
    super();
    this.maxBytes = request.maxBytes;
    this.steps.push({ text: 'BEGIN TRANSACTION READ ONLY', values: [], name: 'zmodu_ro_begin' });
    // A slot of the caller's share, as the application's role, before anything of the statement's: none free, nothing runs.
    this.slotStep = -1;
    this.slotLimit = 0;
    if (request.slot) {
      this.slotStep = this.steps.length;
      this.slotLimit = Math.max(1, Math.floor(request.slot.limit));
      this.steps.push({ text: TAKE_SLOT_OR_FAIL_SQL, values: [request.slot.key, this.slotLimit], name: 'zmodu_ro_slot' });
    }
    // The settings and the role in one statement: set_config('role', r, true) is SET LOCAL ROLE (the same membership check).
    const settings: Array<[string, string]> = [
      ['statement_timeout', String(Math.max(1, Math.floor(request.timeoutMs)))],
      ...Object.entries(request.settings ?? {}),
    ];
    if (request.role) settings.push(['role', request.role]);
    const values: string[] = [];
    const calls = settings.map(([name, value]) => {
      values.push(name, value);
      return `pg_catalog.set_config($${values.length - 1}, $${values.length}, true)`;
    });
    this.steps.push({ text: `SELECT ${calls.join(', ')}`, values, name: `zmodu_ro_settings_${settings.length}` });
    this.statementStep = this.steps.length;
    this.steps.push({ text: request.text, values: request.values });
    this.steps.push({ text: 'ROLLBACK', values: [], name: 'zmodu_ro_rollback' });
    this.unlockStep = -1;
    if (request.releaseSessionLocks) {
      // A session-level advisory lock survives the rollback: released here, as the session's own role.
      this.unlockStep = this.steps.length;
      this.steps.push({ text: UNLOCK_ALL_SQL, values: [], name: 'zmodu_ro_unlock' });
    }
  }

  submit(connection: PgConnection): null {
    connection.stream.cork?.();
    try {
      this.steps.forEach((s, i) => {
        const name = s.name ?? '';
        if (!s.name || !this.prepared.has(s.name)) {
          connection.parse({ text: s.text, name, types: [] });
          if (s.name) this.prepared.add(s.name); // forgotten again if this run fails
        }
        connection.bind({ portal: '', statement: name, values: s.values, valueMapper: pgInternal().prepareValue });
        if (i === this.statementStep) connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  override handleRowDescription(msg: { fields: unknown[] }): void {
    if (this.step === this.statementStep) this._result.addFields(msg.fields);
  }

  override handleDataRow(msg: { fields: unknown[]; length?: number }): void {
    if (this.step !== this.statementStep || this.failed || this.full) return; // the settings' row is not ours to return
    this.bytes += msg.length ?? 0;
    if (this.maxBytes !== undefined && this.bytes > this.maxBytes) {
      // Enough: what is kept answers; the rest is not read (the connection is closed, see `onFull`).
      this.full = true;
      this.onFull?.();
      return;
    }
    try {
      this._result.addRow(this._result.parseRow(msg.fields));
    } catch (err) {
      this.failed = err as Error;
    }
  }

  /** The rows taken so far, as a truncated answer (when the byte budget is passed). */
  partial(): ReadOnlyResult {
    return { rows: this._result.rows, fields: this._result.fields.map((f) => f.name), truncated: true };
  }

  override handleCommandComplete(): void {
    this.step++;
  }

  override handleError(err: Error): void {
    const code = (err as { code?: string }).code;
    // After the ROLLBACK: the statement's answer stands. A role that may not release advisory locks could not have taken one.
    if (this.step === this.unlockStep && !this.failed) return this.finish(null, this.result());
    if (this.step === this.slotStep && code === '22012') return this.finish(new SlotsTakenError(this.slotLimit));
    this.finish(this.failed ?? err);
  }

  abandon(err: Error | null, result?: ReadOnlyResult): void {
    this.abandoned = true;
    this.finish(err, result);
  }

  handleReadyForQuery(): void {
    if (this.failed) return this.finish(this.failed);
    this.finish(null, this.result());
  }

  private result(): ReadOnlyResult {
    return { rows: this._result.rows, fields: this._result.fields.map((f) => f.name) };
  }
}

const UNLOCK_ALL_SQL = 'SELECT pg_catalog.pg_advisory_unlock_all()';

/**
 * After a failed run: ROLLBACK, Close of the named statements it may have parsed and, when asked, the release of
 * session advisory locks (last: should it fail, the server skips only what follows it), in one round trip.
 */
class Cleanup extends Submittable<void> {
  constructor(
    private readonly names: string[],
    private readonly unlock: boolean,
  ) {
    super();
  }

  submit(connection: PgConnection): null {
    connection.stream.cork?.();
    try {
      const unnamed = (text: string) => {
        connection.parse({ text, name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: [], valueMapper: pgInternal().prepareValue });
        connection.execute({ portal: '', rows: 0 });
      };
      unnamed('ROLLBACK');
      for (const name of this.names) connection.close({ type: 'S', name });
      if (this.unlock) unnamed(UNLOCK_ALL_SQL);
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleReadyForQuery(): void {
    this.finish(null);
  }
}
