/**
 * `record[key]` for a key a caller can name (an action, a tenant, a channel), own keys only: a
 * tenant called `constructor` or `__proto__` must not find a member of `Object.prototype`.
 */
export function ownValue<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}
