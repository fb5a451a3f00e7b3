/**
 * What an agent (or any caller) may invoke. The guard sees names, not classes:
 * `allow` lists names, `allowExecute` opens the `execute` class for the listed names.
 */
export interface GuardPolicy {
  /** Skill names the policy may call. Nothing else passes. */
  readonly allow: readonly string[];
  /** Skill names that are always refused, even when also allowed. */
  readonly deny?: readonly string[];
  /** Whether listed `execute`-class skills may run. Default false. */
  readonly allowExecute?: boolean;
  /** Token budget for this guard; a call whose cost would exceed it is `denied_budget`. */
  readonly budget?: number;
}
