import { ActionClass } from '../action-class';

/** How a dispatch ended. */
/**
 * How a call ended. `timeout`: its handler was cut off (its own deadline, or the run's abort while it ran: what it did
 * may still have happened); `cancelled`: the run was over before the handler started, so it never ran.
 */
export type AuditOutcome = 'ok' | 'denied' | 'forbidden' | 'invalid_arguments' | 'tenant_required' | 'timeout' | 'cancelled' | 'error';

/** One audit entry per dispatch, allowed or denied. */
export interface AuditEntry {
  readonly runId: string;
  readonly agent: string | null;
  readonly tenantId: string | null;
  readonly userId: string | null;
  readonly skill: string;
  readonly action: ActionClass;
  readonly decision: 'allowed' | 'denied';
  /** The denial cause (guard cause, or `missing_permission`, `invalid_arguments`, `tenant_required`), null when allowed. */
  readonly cause: string | null;
  readonly outcome: AuditOutcome;
  readonly durationMs: number;
  readonly tokens: number;
  readonly at: Date;
  /** A staged execution: the proposal it executes (absent or null for every other call). */
  readonly proposalId?: string | null;
  /** A staged execution: who approved it, in step order. */
  readonly approvers?: readonly string[] | null;
  /** The call's arguments as the dispatcher recorded them: `x-sensitive` fields masked, secrets redacted (absent when not JSON). */
  readonly args?: unknown;
  /** The handler's value, or the error body, redacted like the arguments. */
  readonly result?: unknown;
}

export interface AuditRecord extends AuditEntry {
  readonly id: string;
}

export interface AuditQuery {
  readonly runId?: string;
  readonly agent?: string;
  readonly tenantId?: string;
  readonly userId?: string;
  readonly skill?: string;
  readonly proposalId?: string;
  readonly decision?: 'allowed' | 'denied';
  /** Entries that ended so (`ok`, `denied`, `forbidden`, `error`…). */
  readonly outcome?: AuditOutcome;
  /** Entries after this id (the last id of the page before): pages through the audit in id order. A decimal string. */
  readonly afterId?: string;
  readonly since?: Date;
  readonly until?: Date;
  /** Default 100, at most 1000. Oldest first. */
  readonly limit?: number;
}

export const AUDIT_QUERY_DEFAULT_LIMIT = 100;
export const AUDIT_QUERY_MAX_LIMIT = 1000;

/** The largest id an audit record can have (the id is a PostgreSQL bigint). */
const MAX_AUDIT_ID = 9223372036854775807n;

/** Whether `id` is the decimal id an audit record can have (what `AuditQuery.afterId` takes): 0 to the bigint maximum. */
export function isAuditRecordId(id: unknown): id is string {
  return typeof id === 'string' && /^[0-9]{1,19}$/.test(id) && BigInt(id) <= MAX_AUDIT_ID;
}

/** Refuses a query the stores cannot run: an `afterId` that is not a decimal id. */
export function checkAuditQuery(filter: AuditQuery): void {
  if (filter.afterId !== undefined && !isAuditRecordId(filter.afterId))
    throw new RangeError(`AuditQuery.afterId must be the decimal id of an audit record (got ${JSON.stringify(filter.afterId)})`);
}

export function clampAuditLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return AUDIT_QUERY_DEFAULT_LIMIT;
  return Math.min(AUDIT_QUERY_MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** An entry the store refused on its own while the store was up (a poisoned row), kept apart so that it cannot block the others. */
export interface AuditDeadLetter {
  readonly entry: AuditEntry;
  /** Why the store refused it (the error message). */
  readonly error: string;
  readonly at: Date;
}

export interface AuditDeadLetterRecord extends AuditDeadLetter {
  readonly id: string;
}

// eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL text cannot hold
const UNWRITABLE = /[\u0000]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with NUL characters and lone UTF-16 surrogates (which PostgreSQL text cannot hold) replaced by U+FFFD. */
export function cleanText(text: string): string {
  return text.replace(UNWRITABLE, '\ufffd');
}

function cleanNullable(text: string | null | undefined): string | null | undefined {
  return typeof text === 'string' ? cleanText(text) : text;
}

/**
 * The entry with every text field cleaned (see cleanText), and whether anything was replaced.
 * The same object comes back when nothing needed cleaning.
 */
export function cleanAuditEntry(entry: AuditEntry): { entry: AuditEntry; cleaned: boolean } {
  const out: AuditEntry = {
    ...entry,
    runId: cleanText(String(entry.runId)),
    agent: cleanNullable(entry.agent) as string | null,
    tenantId: cleanNullable(entry.tenantId) as string | null,
    userId: cleanNullable(entry.userId) as string | null,
    skill: cleanText(String(entry.skill)),
    cause: cleanNullable(entry.cause) as string | null,
    ...(entry.proposalId !== undefined ? { proposalId: cleanNullable(entry.proposalId) as string | null } : {}),
    ...(entry.approvers ? { approvers: entry.approvers.map((a) => cleanText(String(a))) } : {}),
  };
  const cleaned =
    out.runId !== entry.runId ||
    out.agent !== entry.agent ||
    out.tenantId !== entry.tenantId ||
    out.userId !== entry.userId ||
    out.skill !== entry.skill ||
    out.cause !== entry.cause ||
    (out.proposalId ?? null) !== (entry.proposalId ?? null) ||
    (entry.approvers ?? []).some((a, i) => a !== out.approvers?.[i]);
  return cleaned ? { entry: out, cleaned } : { entry, cleaned };
}
