import { DataSource, QueryRunner } from 'typeorm';
import { SkillError } from '../../exceptions/skill.error';

export interface ReadOnlyLimits {
  /** Statement timeout on a PostgreSQL server (ms). Default 5000. */
  readonly timeoutMs?: number;
  /** Rows returned at most; more are cut and `truncated` is set. */
  readonly maxRows: number;
  /** JSON bytes of the rows returned at most. Default 256 KiB. */
  readonly maxBytes?: number;
  /**
   * Largest planner cost (EXPLAIN total cost) a statement may have. The embedded database
   * cannot interrupt a running statement, so there it defaults to 200000; on a server the
   * statement timeout is the limit and this is off unless set.
   */
  readonly maxCost?: number;
}

export interface ReadOnlyResult {
  readonly columns: string[];
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number;
  readonly truncated: boolean;
}

export const DEFAULT_MAX_BYTES = 256 * 1024;
export const DEFAULT_TIMEOUT_MS = 5_000;
export const EMBEDDED_MAX_COST = 200_000;

/** True when the DataSource runs on the embedded PGlite driver (@zmodu/db). */
export function isEmbedded(dataSource: DataSource): boolean {
  const driver = (dataSource.options as { driver?: { embedded?: boolean } }).driver;
  return driver?.embedded === true;
}

/** An application's own statement (never a model's), capped at `maxRows + 1` rows so that a cut shows. */
export function capRows(sql: string, maxRows: number): string {
  return `SELECT * FROM (${sql}) AS _zt_result LIMIT ${Math.floor(maxRows) + 1}`;
}

/**
 * Run one SELECT in a READ ONLY transaction with a statement timeout, always rolled back.
 * `text` is final: it must already fetch at most `maxRows + 1` rows (db.query's guard prints it
 * so; `capRows` for an application's own statement). Rows and bytes are capped. A database error
 * becomes a SkillError with a short category and never the database's text (which can quote
 * values from the data).
 */
export async function runReadOnly(dataSource: DataSource, text: string, values: unknown[], limits: ReadOnlyLimits): Promise<ReadOnlyResult> {
  const timeoutMs = Math.max(1, Math.floor(limits.timeoutMs ?? DEFAULT_TIMEOUT_MS));
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  const embedded = isEmbedded(dataSource);
  const maxCost = limits.maxCost ?? (embedded ? EMBEDDED_MAX_COST : undefined);
  const capped = text;
  const runner: QueryRunner = dataSource.createQueryRunner();
  let conn: RawConnection | undefined;
  try {
    // The driver's own connection (pg Client, or the embedded session): one call per statement, no ORM layers.
    conn = (await runner.connect()) as RawConnection;
    // BEGIN and the timeout in one round trip (simple protocol, no parameters).
    await conn.query(`BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${timeoutMs}`);
    if (maxCost !== undefined) {
      const plan = (await conn.query(`EXPLAIN (FORMAT JSON) ${capped}`, values)).rows;
      const cost = totalCost(plan);
      if (cost > maxCost)
        throw new SkillError('too_expensive', `The statement is estimated too expensive to run (cost ${Math.round(cost)} over ${maxCost}): filter more, or aggregate.`, undefined, 'QueryRefused');
    }
    const rows = (await conn.query(capped, values)).rows as Record<string, unknown>[];
    return shape(rows, limits.maxRows, maxBytes);
  } catch (err) {
    if (err instanceof SkillError) throw err;
    throw new SkillError(categorize(err), 'The database refused the statement; the reason is a category only.', undefined, 'QueryFailed');
  } finally {
    if (conn) {
      // pg queues the ROLLBACK on the connection now, ahead of anything its next user sends, so a
      // server caller need not wait the round trip; the embedded session is released only after it.
      const rollback = conn.query('ROLLBACK').catch(() => undefined);
      if (embedded) await rollback;
    }
    await runner.release();
  }
}

interface RawConnection {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

function shape(rows: Record<string, unknown>[], maxRows: number, maxBytes: number): ReadOnlyResult {
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
  return { columns: rows.length ? Object.keys(rows[0]) : [], rows: kept, rowCount: kept.length, truncated };
}

function totalCost(plan: Array<Record<string, unknown>>): number {
  const first = plan?.[0]?.['QUERY PLAN'];
  const doc = typeof first === 'string' ? JSON.parse(first) : first;
  const cost = (doc as Array<{ Plan?: { 'Total Cost'?: number } }>)?.[0]?.Plan?.['Total Cost'];
  return typeof cost === 'number' ? cost : Number.POSITIVE_INFINITY;
}

/** A short, value-free category for a database error, from its SQLSTATE. */
export function categorize(err: unknown): string {
  const e = err as { code?: string; driverError?: { code?: string } };
  const code = e?.driverError?.code ?? e?.code ?? '';
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
    '22012': 'division_by_zero',
  };
  if (exact[code]) return exact[code];
  if (code.startsWith('22')) return 'invalid_input';
  if (code.startsWith('42')) return 'invalid_query';
  if (code.startsWith('53') || code.startsWith('54')) return 'resource_limit';
  return 'query_failed';
}
