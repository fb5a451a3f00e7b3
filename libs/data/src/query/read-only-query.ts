import { runReadOnlyStatement, SlotsTakenError, StatementSlot } from '@zmodu/db/internal';
import { DataSource, QueryRunner } from 'typeorm';
import { SkillError } from '@zmodu/skills';
import { busy } from './tenant-slots';

export interface ReadOnlyLimits {
  /** The statement's deadline (ms), on a server and on the embedded database alike. Default 5000. */
  readonly timeoutMs?: number;
  /** Rows returned at most; more are cut and `truncated` is set. */
  readonly maxRows: number;
  /** JSON bytes of the rows returned at most. Default 256 KiB. */
  readonly maxBytes?: number;
}

/** The database's second fence for a statement: the role it runs as and the settings its policies read. */
export interface ReadOnlyFence {
  readonly role: string;
  /** The settings, for the backend pid of the connection the statement runs on. */
  settings(processId: number): Record<string, string>;
}

/** How a statement runs beyond its limits and its fence. */
export interface ReadOnlyRun {
  /** The caller gave up (the call's deadline, a cancelled run): the statement is cancelled on the server. */
  readonly signal?: AbortSignal;
  /** On a server, a slot of this share is taken first (none free: `tenant_busy`); see TAKE_SLOT_SQL. */
  readonly slot?: StatementSlot;
  /**
   * The statement is a model's (db.query): it runs with `search_path` pinned to `pg_catalog, pg_temp`, so that an
   * unqualified function, operator or type can only be PostgreSQL's own (its tables are schema-qualified), and the
   * session-level advisory locks of its connection are released after the rollback. Always so with a fence.
   */
  readonly untrusted?: boolean;
}

/** What an unqualified name of a model's statement may resolve to: PostgreSQL's own catalog (and, for types and tables, temporary ones last). */
export const PINNED_SEARCH_PATH = 'pg_catalog, pg_temp';

export interface ReadOnlyResult {
  readonly columns: string[];
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number;
  readonly truncated: boolean;
}

export const DEFAULT_MAX_BYTES = 256 * 1024;
export const DEFAULT_TIMEOUT_MS = 5_000;

/** An application's own statement (never a model's), capped at `maxRows + 1` rows so that a cut shows. */
export function capRows(sql: string, maxRows: number): string {
  return `SELECT * FROM (${sql}) AS _zt_result LIMIT ${Math.floor(maxRows) + 1}`;
}

/**
 * Run one SELECT in a READ ONLY transaction, always rolled back, under a deadline that holds on
 * a server (statement_timeout, and a cancel when the caller gives up) and on the embedded database
 * (its worker is stopped), over the extended protocol only (a second statement cannot ride along),
 * in one round trip on a server.
 * `text` is final: it must fetch at most `maxRows + 1` rows (db.query's guard prints it so;
 * `capRows` for an application's own statement). With a fence, the statement runs as its role
 * with its settings. Rows and bytes are capped. A database error becomes a SkillError with a
 * short category and never the database's text (which can quote values from the data).
 */
export async function runReadOnly(
  dataSource: DataSource,
  text: string,
  values: unknown[],
  limits: ReadOnlyLimits,
  fence?: ReadOnlyFence,
  run: ReadOnlyRun = {},
): Promise<ReadOnlyResult> {
  const timeoutMs = Math.max(1, Math.floor(limits.timeoutMs ?? DEFAULT_TIMEOUT_MS));
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  const { signal, slot } = run;
  // A fenced statement is a model's.
  const untrusted = run.untrusted === true || fence !== undefined;
  const runner: QueryRunner = dataSource.createQueryRunner();
  try {
    // The driver's own connection (a pg client, or the embedded database's): no ORM layers.
    const connection = (await runner.connect()) as { processID?: number | null };
    const settings = { ...(untrusted ? { search_path: PINNED_SEARCH_PATH } : {}), ...fence?.settings(connection.processID ?? 0) };
    const result = await runReadOnlyStatement(connection, {
      text,
      values,
      timeoutMs,
      role: fence?.role,
      settings,
      maxBytes,
      releaseSessionLocks: untrusted,
      slot,
      signal,
    });
    const shaped = shape(result.rows, result.fields, limits.maxRows, maxBytes);
    return result.truncated ? { ...shaped, truncated: true } : shaped;
  } catch (err) {
    if (err instanceof SkillError) throw err;
    if (err instanceof SlotsTakenError) throw busy(err.limit);
    throw new SkillError(categorize(err), 'The database refused the statement; the reason is a category only.', undefined, 'QueryFailed');
  } finally {
    await runner.release();
  }
}

function shape(rows: Record<string, unknown>[], fields: string[], maxRows: number, maxBytes: number): ReadOnlyResult {
  let truncated = rows.length > maxRows;
  const kept: Record<string, unknown>[] = [];
  let bytes = 2;
  for (const row of rows.slice(0, maxRows)) {
    const size = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (bytes + size > maxBytes) {
      truncated = true;
      break;
    }
    bytes += size;
    kept.push(row);
  }
  return { columns: fields, rows: kept, rowCount: kept.length, truncated };
}

/** A short, value-free category for a database error, from its SQLSTATE. */
export function categorize(err: unknown): string {
  const e = err as { code?: string; driverError?: { code?: string } };
  const code = String(e?.driverError?.code ?? e?.code ?? '');
  // The database is not there (a refused or broken connection, a server shutting down, the embedded one restarting).
  if (code.startsWith('08') || code.startsWith('57P') || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code))
    return 'database_unavailable';
  const exact: Record<string, string> = {
    '57014': 'timeout',
    '42703': 'undefined_column',
    '42P01': 'undefined_table',
    '42702': 'ambiguous_column',
    '42803': 'grouping_error',
    '42804': 'type_mismatch',
    '42883': 'undefined_function',
    '42P18': 'indeterminate_type',
    '25006': 'read_only',
    '42501': 'permission_denied',
    '22012': 'division_by_zero',
    // A value longer than a bound of db.query's (what a search reads) or of a type.
    '22001': 'value_too_large',
  };
  if (Object.hasOwn(exact, code)) return exact[code];
  if (code.startsWith('22')) return 'invalid_input';
  if (code.startsWith('42')) return 'invalid_query';
  if (code.startsWith('53') || code.startsWith('54')) return 'resource_limit';
  return 'query_failed';
}
