import { ActionClass, AuditOutcome, DenialCause, QuotaBudget } from '@zmodu/guard';

/** The JSON error the model sees, e.g. {"error":"ToolDenied","reason":"denied_execute_class"}. */
export interface SkillErrorBody {
  /** 'ToolDenied', 'PermissionDenied', 'InvalidArguments', 'TenantRequired', 'Timeout', 'SkillFailed', or a handler's SkillError code. */
  readonly error: string;
  readonly reason: string;
  readonly [detail: string]: unknown;
}

export interface SkillCallResult {
  readonly ok: boolean;
  readonly skill: string;
  readonly action: ActionClass;
  /** The guard's decision; `allowed` also when a later step (permission, arguments, tenant) refused. */
  readonly decision: 'allowed' | 'denied';
  /**
   * Guard denial cause, `quota_unavailable` (the token quota could not be read: refused, fail closed,
   * decision 'denied', outcome 'error'), or the later refusal (`missing_permission`, `invalid_arguments`, `tenant_required`).
   */
  readonly cause: DenialCause | 'quota_unavailable' | 'missing_permission' | 'invalid_arguments' | 'tenant_required' | null;
  readonly outcome: AuditOutcome;
  /** With `denied_budget` from the persistent quota: which budget ran out, the tenant's or the user's share. */
  readonly budget?: QuotaBudget;
  /**
   * The arguments as they may be shown (run results, events): `x-sensitive` fields masked, secrets redacted. Absent
   * when they were not JSON-serializable. The handler got the real ones.
   */
  readonly arguments?: unknown;
  /** The handler's value when ok, as plain JSON, with secrets redacted (see Redactor). */
  readonly value?: unknown;
  readonly error?: SkillErrorBody;
  /** What the model sees: the value, or the error, as JSON. */
  readonly observation: string;
  readonly durationMs: number;
  /** Tokens metered for the call (arguments and observation, estimated at 4 characters a token). */
  readonly tokens: number;
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
