import { AUDIT_QUERY_MAX_LIMIT, isAuditRecordId } from '@zmodu/guard/internal';
import { AuditLogStore, AuditOutcome, AuditQuery, AuditRecord } from '@zmodu/guard';
import { toCsv } from '@zmodu/skills/internal';
import { AuditTenantForbiddenException } from '../exceptions/audit-tenant-forbidden.exception';
import { InvalidAuditFilterException } from '../exceptions/invalid-audit-filter.exception';

/** How an export is written: JSON rows, or CSV (RFC 4180, CRLF, a header line). */
export type AuditExportFormat = 'json' | 'csv';

/** The kinds of entry an export can be filtered by: how the call ended (the audit's `outcome`). */
export const AUDIT_EXPORT_KINDS: readonly AuditOutcome[] = [
  'ok',
  'denied',
  'forbidden',
  'invalid_arguments',
  'tenant_required',
  'timeout',
  'cancelled',
  'error',
];

/** Rows an export returns when no limit is given. */
export const AUDIT_EXPORT_DEFAULT_LIMIT = 100;

/**
 * The filters of an audit export or listing as a caller gives them: a model's arguments to `admin.audit.export`, or the
 * query string of `GET /admin/audit` (numbers may come as text). Every field is optional.
 */
export interface AuditExportRequest {
  /** How the call ended: one of AUDIT_EXPORT_KINDS. */
  readonly kind?: unknown;
  /** The tenant to read: only the caller's own, unless the scope allows all tenants. */
  readonly tenant?: unknown;
  readonly skill?: unknown;
  readonly agent?: unknown;
  readonly run?: unknown;
  readonly user?: unknown;
  /** `allowed` or `denied`. */
  readonly decision?: unknown;
  /** ISO 8601 date-times, inclusive. */
  readonly since?: unknown;
  readonly until?: unknown;
  /** 1 to 1000, default 100. */
  readonly limit?: unknown;
  /** The `nextCursor` of the page before. */
  readonly cursor?: unknown;
  /** `json` (default) or `csv`. */
  readonly format?: unknown;
}

/** Whose audit the caller may read: its own tenant, or (a platform admin) any tenant. */
export interface AuditExportScope {
  /** The caller's tenant, from the authenticated caller or the skill context, never from the filters. */
  readonly tenantId: string | null;
  /** May name another tenant, or leave the tenant out to read all tenants. Default false. */
  readonly allTenants?: boolean;
}

export interface ParsedAuditExport {
  readonly query: AuditQuery & { readonly limit: number };
  readonly format: AuditExportFormat;
}

/** One audit entry as an export shows it: plain JSON, the time as ISO 8601 text. */
export interface AuditExportRow {
  readonly id: string;
  readonly at: string;
  readonly tenantId: string | null;
  readonly userId: string | null;
  readonly agent: string | null;
  readonly runId: string;
  readonly skill: string;
  readonly action: string;
  readonly decision: string;
  readonly cause: string | null;
  readonly outcome: string;
  readonly durationMs: number;
  readonly tokens: number;
  readonly proposalId: string | null;
  readonly approvers: readonly string[] | null;
  readonly args?: unknown;
  readonly result?: unknown;
}

export interface AuditExportPage {
  readonly entries: AuditExportRow[];
  /** Give it back as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null;
}

/** The CSV columns, in order. */
export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'tenantId',
  'userId',
  'agent',
  'runId',
  'skill',
  'action',
  'decision',
  'cause',
  'outcome',
  'durationMs',
  'tokens',
  'proposalId',
  'approvers',
  'args',
  'result',
] as const;

const FILTER_TEXT_MAX = 200;
// eslint-disable-next-line no-control-regex -- control characters are what a filter must not hold
const CONTROL = /[\u0000-\u001f\u007f]/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Reads and checks the filters of an audit export, and scopes it to what the caller may read: the caller's tenant,
 * unless `scope.allTenants`. Throws InvalidAuditFilterException (naming the field) for a filter it cannot read, and
 * AuditTenantForbiddenException when a tenant admin names another tenant. Unknown filter names are refused too, so a
 * misspelt filter never silently widens an export.
 */
export function parseAuditExport(raw: unknown, scope: AuditExportScope): ParsedAuditExport {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw)))
    throw new InvalidAuditFilterException(
      'filters',
      'the filters must be an object of { kind, tenant, skill, agent, run, user, decision, since, until, limit, cursor, format }',
    );
  const r = (raw ?? {}) as Record<string, unknown>;
  const known = new Set(['kind', 'tenant', 'skill', 'agent', 'run', 'user', 'decision', 'since', 'until', 'limit', 'cursor', 'format']);
  for (const key of Object.keys(r))
    if (!known.has(key))
      throw new InvalidAuditFilterException(
        key,
        `unknown filter '${key.slice(0, 40)}': use kind, tenant, skill, agent, run, user, decision, since, until, limit, cursor or format`,
      );
  const own = (key: string): unknown => (Object.hasOwn(r, key) ? r[key] : undefined);

  const tenant = text(own('tenant'), 'tenant');
  let tenantId: string | undefined;
  if (scope.allTenants === true) tenantId = tenant;
  else {
    if (scope.tenantId === null || (tenant !== undefined && tenant !== scope.tenantId)) throw new AuditTenantForbiddenException();
    tenantId = scope.tenantId;
  }

  const kind = text(own('kind'), 'kind');
  if (kind !== undefined && !AUDIT_EXPORT_KINDS.includes(kind as AuditOutcome))
    throw new InvalidAuditFilterException('kind', `kind must be one of ${AUDIT_EXPORT_KINDS.join(', ')}`);
  const decision = text(own('decision'), 'decision');
  if (decision !== undefined && decision !== 'allowed' && decision !== 'denied')
    throw new InvalidAuditFilterException('decision', 'decision must be allowed or denied');
  const format = text(own('format'), 'format') ?? 'json';
  if (format !== 'json' && format !== 'csv') throw new InvalidAuditFilterException('format', 'format must be json or csv');
  const since = date(own('since'), 'since');
  const until = date(own('until'), 'until');
  if (since && until && since > until) throw new InvalidAuditFilterException('since', 'since must not be later than until');
  const cursor = text(own('cursor'), 'cursor');
  if (cursor !== undefined && !isAuditRecordId(cursor))
    throw new InvalidAuditFilterException('cursor', 'cursor must be the nextCursor of the page before, as given');

  const query: AuditQuery & { limit: number } = {
    limit: limit(own('limit')),
    ...(tenantId !== undefined ? { tenantId } : {}),
    ...(kind !== undefined ? { outcome: kind as AuditOutcome } : {}),
    ...(decision !== undefined ? { decision } : {}),
    ...optional('skill', text(own('skill'), 'skill')),
    ...optional('agent', text(own('agent'), 'agent')),
    ...optional('runId', text(own('run'), 'run')),
    ...optional('userId', text(own('user'), 'user')),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(cursor !== undefined ? { afterId: cursor } : {}),
  };
  return { query, format };
}

/** One page of the audit for a parsed export: at most `limit` rows in id order, and the cursor of the next page. */
export async function readAuditPage(store: AuditLogStore, parsed: ParsedAuditExport): Promise<AuditExportPage> {
  const { limit } = parsed.query;
  // One more than asked: whether a next page exists, without a count (at the stores' maximum, a full page says maybe).
  const fetch = Math.min(limit + 1, AUDIT_QUERY_MAX_LIMIT);
  const records = await store.query({ ...parsed.query, limit: fetch });
  const page = records.slice(0, limit);
  const more = records.length > limit || (fetch === limit && records.length === limit);
  return { entries: page.map(auditExportRow), nextCursor: more && page.length > 0 ? page[page.length - 1].id : null };
}

/** An audit record as an export shows it. */
export function auditExportRow(r: AuditRecord): AuditExportRow {
  return {
    id: r.id,
    at: r.at.toISOString(),
    tenantId: r.tenantId,
    userId: r.userId,
    agent: r.agent,
    runId: r.runId,
    skill: r.skill,
    action: r.action,
    decision: r.decision,
    cause: r.cause,
    outcome: r.outcome,
    durationMs: r.durationMs,
    tokens: r.tokens,
    proposalId: r.proposalId ?? null,
    approvers: r.approvers ?? null,
    ...(r.args !== undefined ? { args: r.args } : {}),
    ...(r.result !== undefined ? { result: r.result } : {}),
  };
}

/**
 * The rows as CSV, written by toCsv (@zmodu/skills, the one CSV writer of every export): a header line, then one line
 * per row, CRLF line ends, every field quoted, and a field a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a
 * tab or a carriage return first, after any leading blanks) led by `'`. Approvers are joined with `;`; arguments and
 * results are JSON text.
 */
export function auditCsv(rows: readonly AuditExportRow[]): string {
  return toCsv(
    AUDIT_CSV_COLUMNS,
    rows.map((row) => ({
      ...row,
      approvers: row.approvers === null ? null : row.approvers.join(';'),
      args: row.args === undefined ? undefined : JSON.stringify(row.args),
      result: row.result === undefined ? undefined : JSON.stringify(row.result),
    })),
  );
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value !== undefined ? { [key]: value } : {}) as { [P in K]?: string };
}

function text(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new InvalidAuditFilterException(field, `${field} must be text`);
  if (value.length > FILTER_TEXT_MAX || CONTROL.test(value))
    throw new InvalidAuditFilterException(field, `${field} must be at most ${FILTER_TEXT_MAX} characters with no control characters`);
  return value;
}

function date(value: unknown, field: string): Date | undefined {
  const t = text(value, field);
  if (t === undefined) return undefined;
  const d = new Date(t);
  if (!ISO_DATE_TIME.test(t) || Number.isNaN(d.getTime()))
    throw new InvalidAuditFilterException(field, `${field} must be an ISO 8601 date or date-time, e.g. 2026-12-01T00:00:00Z`);
  return d;
}

function limit(value: unknown): number {
  if (value === undefined || value === null || value === '') return AUDIT_EXPORT_DEFAULT_LIMIT;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,7}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > AUDIT_QUERY_MAX_LIMIT)
    throw new InvalidAuditFilterException('limit', `limit must be a whole number from 1 to ${AUDIT_QUERY_MAX_LIMIT}`);
  return n;
}
