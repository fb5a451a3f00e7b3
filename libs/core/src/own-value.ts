/**
 * `record[key]` for a key a caller can name (an action, a tenant, a channel), own keys only: a
 * tenant called `constructor` or `__proto__` must not find a member of `Object.prototype`.
 */
export function ownValue<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The options a caller gave, safe to merge over defaults (`Object.assign(new XOptions(), ownOptions(raw))`):
 * own enumerable keys only, without `__proto__`, `constructor` and `prototype` (a JSON `{"__proto__": ...}`
 * would otherwise replace the merged object's prototype), and without keys whose value is `undefined`
 * (they keep their default). Anything that is not an object gives `{}`.
 */
export function ownOptions<T extends object>(raw: T | null | undefined): Partial<T> {
  const out: Record<string, unknown> = {};
  if (raw === null || typeof raw !== 'object') return out as Partial<T>;
  for (const key of Object.keys(raw)) {
    const value = (raw as Record<string, unknown>)[key];
    if (!UNSAFE_KEYS.has(key) && value !== undefined) out[key] = value;
  }
  return out as Partial<T>;
}
