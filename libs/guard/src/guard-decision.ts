/**
 * Why a call was refused before it ran: the guard's four causes, in the fixed order in which the
 * guard evaluates them, then two that the dispatcher and the agent add with the same counting:
 * `denied_staged` (a staged skill called by anyone but the proposal pipeline) and
 * `denied_turn_cap` (a tool call past the agent's `maxToolCallsPerTurn`).
 */
export const DENIAL_CAUSES = [
  'denied_explicitly',
  'denied_not_listed',
  'denied_execute_class',
  'denied_budget',
  'denied_staged',
  'denied_turn_cap',
] as const;

export type DenialCause = (typeof DENIAL_CAUSES)[number];

export type GuardDecision = { readonly allowed: true; readonly cause: null } | { readonly allowed: false; readonly cause: DenialCause };

/** Decisions are shared frozen constants: a guard decision allocates nothing. */
export const ALLOWED: GuardDecision = Object.freeze({ allowed: true, cause: null });

export const DENIED: Readonly<Record<DenialCause, GuardDecision>> = Object.freeze({
  denied_explicitly: Object.freeze({ allowed: false, cause: 'denied_explicitly' }),
  denied_not_listed: Object.freeze({ allowed: false, cause: 'denied_not_listed' }),
  denied_execute_class: Object.freeze({ allowed: false, cause: 'denied_execute_class' }),
  denied_budget: Object.freeze({ allowed: false, cause: 'denied_budget' }),
  denied_staged: Object.freeze({ allowed: false, cause: 'denied_staged' }),
  denied_turn_cap: Object.freeze({ allowed: false, cause: 'denied_turn_cap' }),
});
