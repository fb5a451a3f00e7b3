/** Why a guard refused a call, in the fixed order in which the guard evaluates them. */
export const DENIAL_CAUSES = [
  'denied_explicitly',
  'denied_not_listed',
  'denied_execute_class',
  'denied_budget',
] as const;

export type DenialCause = (typeof DENIAL_CAUSES)[number];

export type GuardDecision =
  | { readonly allowed: true; readonly cause: null }
  | { readonly allowed: false; readonly cause: DenialCause };

/** Decisions are shared frozen constants: a guard decision allocates nothing. */
export const ALLOWED: GuardDecision = Object.freeze({ allowed: true, cause: null });

export const DENIED: Readonly<Record<DenialCause, GuardDecision>> = Object.freeze({
  denied_explicitly: Object.freeze({ allowed: false, cause: 'denied_explicitly' }),
  denied_not_listed: Object.freeze({ allowed: false, cause: 'denied_not_listed' }),
  denied_execute_class: Object.freeze({ allowed: false, cause: 'denied_execute_class' }),
  denied_budget: Object.freeze({ allowed: false, cause: 'denied_budget' }),
});
