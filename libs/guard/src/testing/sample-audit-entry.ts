import { AuditEntry } from '../audit/audit-entry';

/** An audit entry for tests: one allowed read by acme's trader, now; `over` replaces any field. */
export function sampleAuditEntry(runId: string, over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    runId,
    agent: 'trader',
    tenantId: 'acme',
    userId: 'u',
    skill: 'market.quote',
    action: 'read',
    decision: 'allowed',
    cause: null,
    outcome: 'ok',
    durationMs: 1,
    tokens: 2,
    at: new Date(),
    ...over,
  };
}
