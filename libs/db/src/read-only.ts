import type { ReadOnlyRequest, ReadOnlyResult } from './embedded-database';
import { isEmbeddedConnection } from './pglite-driver';

// pg's own row parser and value serializer (both exported by pg's package map).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const PgResult = require('pg/lib/result') as new () => PgResultInternal;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (v: unknown) => unknown };

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
  parse(q: { text: string; name: string; types: number[] }): void;
  bind(c: { portal: string; statement: string; values: readonly unknown[]; valueMapper: (v: unknown) => unknown }): void;
  describe(c: { type: 'P'; name: string }): void;
  execute(c: { portal: string; rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

interface PgClientLike {
  query(submittableOrText: unknown): Promise<unknown> | unknown;
}

export type { ReadOnlyRequest, ReadOnlyResult };

/**
 * Run one statement in a READ ONLY transaction that is always rolled back, on a raw driver
 * connection (what TypeORM's `queryRunner.connect()` returns): a `pg` client or the embedded
 * database's. Every statement goes over the extended protocol (the statement is one statement,
 * whatever its text). On a server the steps are pipelined: BEGIN, the settings, SET LOCAL ROLE,
 * the statement and ROLLBACK are written at once and answered after one Sync, so the whole run
 * is one round trip (a second one, ROLLBACK, only after an error). The deadline is the server's
 * `statement_timeout`; on the embedded database, the worker is stopped at it.
 */
export async function runReadOnlyStatement(connection: unknown, request: ReadOnlyRequest): Promise<ReadOnlyResult> {
  if (isEmbeddedConnection(connection)) return connection.readOnly(request);
  const client = connection as PgClientLike;
  const run = new ReadOnlyPipeline(request);
  client.query(run);
  try {
    return await run.done;
  } catch (err) {
    // The server skipped the rest up to Sync: the transaction, if BEGIN ran, is aborted. pg sends this
    // ROLLBACK after the ReadyForQuery of the pipeline, ahead of anything the connection's next user sends.
    (client.query('ROLLBACK') as Promise<unknown>).catch(() => undefined);
    throw err;
  }
}

interface Step {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** A pg submittable (the interface pg-cursor uses) that writes several extended-protocol statements and one Sync. */
class ReadOnlyPipeline {
  callback?: (err: Error | null, result?: ReadOnlyResult) => void;
  /** pg gives this result its type parsers (the client's own) before the run is submitted. */
  readonly _result: PgResultInternal = new PgResult();
  readonly done: Promise<ReadOnlyResult>;
  private readonly steps: Step[] = [];
  private readonly statementStep: number;
  private step = 0;
  private failed?: Error;
  private settled = false;

  constructor(request: ReadOnlyRequest) {
    this.steps.push({ text: 'BEGIN TRANSACTION READ ONLY', values: [] });
    const settings: Array<[string, string]> = [['statement_timeout', String(Math.max(1, Math.floor(request.timeoutMs)))], ...Object.entries(request.settings ?? {})];
    const values: string[] = [];
    const calls = settings.map(([name, value]) => {
      values.push(name, value);
      return `set_config($${values.length - 1}, $${values.length}, true)`;
    });
    this.steps.push({ text: `SELECT ${calls.join(', ')}`, values });
    if (request.role) this.steps.push({ text: `SET LOCAL ROLE "${request.role.replace(/"/g, '""')}"`, values: [] });
    this.statementStep = this.steps.length;
    this.steps.push({ text: request.text, values: request.values });
    this.steps.push({ text: 'ROLLBACK', values: [] });
    this.done = new Promise((resolve, reject) => {
      this.callback = (err, result) => (err ? reject(err) : resolve(result!));
    });
  }

  submit(connection: PgConnection): null {
    connection.stream.cork?.();
    try {
      this.steps.forEach((s, i) => {
        connection.parse({ text: s.text, name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: s.values, valueMapper: prepareValue });
        if (i === this.statementStep) connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: unknown[] }): void {
    if (this.step === this.statementStep) this._result.addFields(msg.fields);
  }

  handleDataRow(msg: { fields: unknown[] }): void {
    if (this.step !== this.statementStep || this.failed) return; // the settings' row is not ours to return
    try {
      this._result.addRow(this._result.parseRow(msg.fields));
    } catch (err) {
      this.failed = err as Error;
    }
  }

  handleCommandComplete(): void {
    this.step++;
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: PgConnection): void {
    connection.sendCopyFail('COPY is not allowed here');
  }

  handleCopyData(): void {}

  /** pg completes a query at its first error (the server skips the rest up to Sync). */
  handleError(err: Error): void {
    this.finish(this.failed ?? err);
  }

  handleReadyForQuery(): void {
    if (this.failed) return this.finish(this.failed);
    this.finish(null, { rows: this._result.rows, fields: this._result.fields.map((f) => f.name) });
  }

  private finish(err: Error | null, result?: ReadOnlyResult): void {
    if (this.settled) return;
    this.settled = true;
    this.callback?.(err, result);
  }
}
