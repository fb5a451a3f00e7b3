import { ActionClass } from '../action-class';

/** How a dispatch ended. */
export type AuditOutcome =
  | 'ok'
  | 'denied'
  | 'forbidden'
  | 'invalid_arguments'
  | 'tenant_required'
  | 'timeout'
  | 'error';

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
  readonly since?: Date;
  readonly until?: Date;
  /** Default 100, at most 1000. Oldest first. */
  readonly limit?: number;
}

export const AUDIT_QUERY_DEFAULT_LIMIT = 100;
export const AUDIT_QUERY_MAX_LIMIT = 1000;

export function clampAuditLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return AUDIT_QUERY_DEFAULT_LIMIT;
  return Math.min(AUDIT_QUERY_MAX_LIMIT, Math.max(1, Math.floor(limit)));
}
