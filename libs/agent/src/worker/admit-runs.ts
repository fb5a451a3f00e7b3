import { AgentRunLimits, NewAgentRun, RefusedRun } from './worker.ports';

/**
 * Which of `runs` an insert stores, given the runs already waiting (per tenant, and in all) as counted in the insert's
 * own transaction (under its locks): in order, each run that fits both bounds is admitted and counted, the others are
 * refused with the bound they met. The one rule of every AgentRunStore of this package.
 */
export function admitRuns(
  runs: readonly NewAgentRun[],
  limits: AgentRunLimits,
  tenantWaiting: Map<string, number>,
  totalWaiting: number,
): { accepted: NewAgentRun[]; refused: RefusedRun[] } {
  const accepted: NewAgentRun[] = [];
  const refused: RefusedRun[] = [];
  let total = totalWaiting;
  for (const r of runs) {
    const n = tenantWaiting.get(r.tenantId) ?? 0;
    if (limits.total !== undefined && total >= limits.total)
      refused.push({ runId: r.id, tenantId: r.tenantId, bound: 'mailbox', waiting: total });
    else if (limits.perTenant !== undefined && n >= limits.perTenant)
      refused.push({ runId: r.id, tenantId: r.tenantId, bound: 'tenant', waiting: n });
    else {
      tenantWaiting.set(r.tenantId, n + 1);
      total++;
      accepted.push(r);
    }
  }
  return { accepted, refused };
}
