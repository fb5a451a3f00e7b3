/**
 * JSON with object keys sorted and no whitespace; undefined object members are left out (as JSON.stringify does).
 * The one canonical JSON of the libraries: the audit chain hashes it, command keys and argument digests are made of it.
 * It stands for JSON values (what a model or a caller sends); a Date or a class instance is written as its own
 * enumerable keys.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const members = Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
  return `{${members.join(',')}}`;
}
