/**
 * The class axis of the guard. A skill that declares no action is `execute`,
 * the strictest class, which never passes a policy with `allowExecute: false`.
 */
export const ACTION_CLASSES = ['read', 'propose', 'execute'] as const;

export type ActionClass = (typeof ACTION_CLASSES)[number];

export const DEFAULT_ACTION_CLASS: ActionClass = 'execute';

export function isActionClass(value: unknown): value is ActionClass {
  return value === 'read' || value === 'propose' || value === 'execute';
}

/** Undeclared or unrecognised classes fall to `execute` (fail closed). */
export function normalizeActionClass(value: unknown): ActionClass {
  return isActionClass(value) ? value : DEFAULT_ACTION_CLASS;
}
