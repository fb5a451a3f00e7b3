/** Counters of one run, or of an agent across its runs. */
export interface AgentMetricsSnapshot {
  readonly runs: number;
  readonly steps: number;
  readonly toolCalls: number;
  /** Refused tool calls by cause: the guard's four causes, then `missing_permission`, `invalid_arguments`, `tenant_required`. */
  readonly toolDenied: Readonly<Record<string, number>>;
  readonly toolDeniedTotal: number;
  readonly toolErrors: number;
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly durationMs: number;
}

export class AgentMetrics {
  runs = 0;
  steps = 0;
  toolCalls = 0;
  toolErrors = 0;
  tokensIn = 0;
  tokensOut = 0;
  durationMs = 0;
  private readonly denied: Record<string, number> = {};

  denial(cause: string): void {
    this.denied[cause] = (this.denied[cause] ?? 0) + 1;
  }

  add(other: AgentMetricsSnapshot): void {
    this.runs += other.runs;
    this.steps += other.steps;
    this.toolCalls += other.toolCalls;
    this.toolErrors += other.toolErrors;
    this.tokensIn += other.tokensIn;
    this.tokensOut += other.tokensOut;
    this.durationMs += other.durationMs;
    for (const [cause, n] of Object.entries(other.toolDenied)) this.denied[cause] = (this.denied[cause] ?? 0) + n;
  }

  snapshot(): AgentMetricsSnapshot {
    let total = 0;
    for (const n of Object.values(this.denied)) total += n;
    return {
      runs: this.runs,
      steps: this.steps,
      toolCalls: this.toolCalls,
      toolDenied: { ...this.denied },
      toolDeniedTotal: total,
      toolErrors: this.toolErrors,
      tokensIn: this.tokensIn,
      tokensOut: this.tokensOut,
      durationMs: this.durationMs,
    };
  }
}
