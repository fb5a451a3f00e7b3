import { Logger } from '@nestjs/common';
import type { AuditEntry } from '../audit/audit-entry';

/**
 * What the runtime reports as it happens, for observers such as metrics (`MetricsModule` of @zmodu/admin):
 * - `tool_call`: one dispatch, allowed or not, as the audit log records it (skill, action class, outcome, cause, tenant, agent);
 * - `tokens`: tokens charged to the quota of a tenant and an agent (a model turn, or a tool call's estimate);
 * - `run`: an agent run ended, with its stop reason as `status`;
 * - `proposal_verdict`: the proposal pipeline decided (a submission's verdict, a human's decision, an execution);
 * - `proposal_settled`: a proposal left the queue for good (executed, rejected, failed): a run waiting on it
 *   (`runId`) may go on. A hint: whoever acts on it reads the proposal from the pipeline's store (ProposalOutcomes);
 * - `run_resumed`: a run that waited for a human goes on (its decisions recorded; the AgentWorker queued it again), on
 *   the instance that resumed it: e.g. to tell the user that the conversation continues.
 */
export type RuntimeEvent =
  | { readonly type: 'tool_call'; readonly entry: AuditEntry }
  | { readonly type: 'tokens'; readonly tenantId: string; readonly agent: string; readonly tokens: number }
  | {
      readonly type: 'run';
      readonly agent: string;
      readonly status: string;
      readonly durationMs: number;
      readonly tenantId: string | null;
    }
  | { readonly type: 'proposal_verdict'; readonly verdict: string }
  | { readonly type: 'proposal_settled'; readonly tenantId: string; readonly proposalId: string; readonly runId: string | null }
  | { readonly type: 'run_resumed'; readonly tenantId: string; readonly runId: string; readonly agent: string };

/** Told of every runtime event, synchronously, on the path of the call: keep it cheap. What it throws is swallowed. */
export type RuntimeObserver = (event: RuntimeEvent) => void;

/**
 * The observer port of the runtime: the libraries below @zmodu/admin (the audit log, the token quota, the agent run
 * loop, the proposal pipeline) emit here and know nothing of who listens, so no library imports admin. Provided and
 * exported by GuardModule (one per application). An observer never fails a call: what it throws (or a promise it
 * returns rejects with) is swallowed, counted in `failures` and logged (the first, then every 1000th).
 */
export class RuntimeEvents {
  private readonly logger = new Logger('RuntimeEvents');
  private readonly observers = new Set<RuntimeObserver>();
  private failureCount = 0;

  /** Add an observer; returns the function that removes it. */
  subscribe(observer: RuntimeObserver): () => void {
    if (typeof observer !== 'function') throw new TypeError('RuntimeEvents.subscribe needs a function (event) => void.');
    this.observers.add(observer);
    return () => void this.observers.delete(observer);
  }

  /** Tell every observer. Never throws. */
  emit(event: RuntimeEvent): void {
    for (const observer of this.observers) {
      try {
        const returned = observer(event) as unknown;
        if (returned instanceof Promise) returned.catch((err: unknown) => this.failed(event, err));
      } catch (err) {
        this.failed(event, err);
      }
    }
  }

  /** Observer calls that threw or rejected. */
  get failures(): number {
    return this.failureCount;
  }

  private failed(event: RuntimeEvent, err: unknown): void {
    this.failureCount++;
    if (this.failureCount === 1 || this.failureCount % 1000 === 0)
      this.logger.error(
        `an observer of '${event.type}' events failed (the call goes on; ${this.failureCount} failures in all): ${(err as Error)?.message ?? String(err)}`,
      );
  }
}
