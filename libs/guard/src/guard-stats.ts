import { DenialCause } from './guard-decision';

/** Counters of a guard: allowed calls and denials per cause. */
export class GuardStats {
  allowed = 0;
  denied_explicitly = 0;
  denied_not_listed = 0;
  denied_execute_class = 0;
  denied_budget = 0;
  denied_staged = 0;
  denied_turn_cap = 0;

  count(cause: DenialCause | null): void {
    if (cause === null) this.allowed++;
    else this[cause]++;
  }

  get denied(): number {
    return (
      this.denied_explicitly +
      this.denied_not_listed +
      this.denied_execute_class +
      this.denied_budget +
      this.denied_staged +
      this.denied_turn_cap
    );
  }

  snapshot(): GuardStatsSnapshot {
    return {
      allowed: this.allowed,
      denied: this.denied,
      denied_explicitly: this.denied_explicitly,
      denied_not_listed: this.denied_not_listed,
      denied_execute_class: this.denied_execute_class,
      denied_budget: this.denied_budget,
      denied_staged: this.denied_staged,
      denied_turn_cap: this.denied_turn_cap,
    };
  }
}

export interface GuardStatsSnapshot {
  readonly allowed: number;
  readonly denied: number;
  readonly denied_explicitly: number;
  readonly denied_not_listed: number;
  readonly denied_execute_class: number;
  readonly denied_budget: number;
  readonly denied_staged: number;
  readonly denied_turn_cap: number;
}
