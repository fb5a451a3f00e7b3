/** Longest tenant or user id a store or a worker takes. */
export const MAX_SCOPE_ID_LENGTH = 200;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why `value` is not a tenant or user id, or null when it is one. One rule for every library: missing, not a string,
 * empty or whitespace, '0' (there is no wildcard tenant or user, ever: the spec's tenant 0 is the bug we must not
 * have), longer than MAX_SCOPE_ID_LENGTH, or holding a NUL or control character. A read with such an id finds nothing;
 * a write is refused with the problem as its message.
 */
export function scopeIdProblem(name: string, value: unknown): string | null {
  if (typeof value !== 'string') return `${name} is ${value === undefined ? 'missing' : `a ${typeof value}, not a string`}`;
  if (!value.trim()) return `${name} is empty`;
  if (value.trim() === '0') return `${name} '0' is not an id (there is no wildcard tenant or user)`;
  if (value.length > MAX_SCOPE_ID_LENGTH) return `${name} is longer than ${MAX_SCOPE_ID_LENGTH} characters`;
  if (CONTROL.test(value)) return `${name} holds a NUL or control character`;
  return null;
}

/** Whether `value` is a tenant or user id under scopeIdProblem's rule. */
export function isScopeId(value: unknown): value is string {
  return scopeIdProblem('id', value) === null;
}
