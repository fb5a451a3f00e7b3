import { InvalidConfigWriteException } from './exceptions/invalid-config-write.exception';
import type { ConfigWrite } from './admin-config.types';

/** The longest config key name. */
export const MAX_CONFIG_KEY_LENGTH = 128;
/** The largest config value, as JSON characters. */
export const MAX_CONFIG_VALUE_CHARS = 65_536;
/** A key name: letters, digits, `_`, `-`, dots between segments, e.g. `orders.maxDraft`. */
export const CONFIG_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z][A-Za-z0-9_-]*)*$/;

/** A store write's arguments checked once: what every store writes, or InvalidConfigWriteException. */
export interface CheckedWrite {
  readonly tenantId: string;
  readonly key: string;
  /** The value as JSON text. */
  readonly json: string;
  readonly expectedVersion: number | undefined;
  readonly updatedBy: string | null;
}

/** The JSON text of a value, or undefined when it has none (undefined, a function, a cycle, a BigInt). */
export function jsonText(value: unknown): string | undefined {
  try {
    return value === undefined ? undefined : JSON.stringify(value);
  } catch {
    return undefined;
  }
}

// eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL's jsonb cannot hold
const UNWRITABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why PostgreSQL's jsonb cannot keep a JSON value. */
export const UNWRITABLE_VALUE_PROBLEM =
  'the value holds a NUL character or a lone surrogate (in a string or a member name), which the store cannot keep';

/** Whether a string or member name of a JSON value holds text jsonb refuses (NUL, a lone UTF-16 surrogate). Walks without recursion. */
export function hasUnwritableText(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (UNWRITABLE.test(v)) return true;
    } else if (v !== null && typeof v === 'object')
      for (const [key, child] of Object.entries(v)) {
        if (UNWRITABLE.test(key)) return true;
        stack.push(child);
      }
  }
  return false;
}

export function checkTenant(tenantId: unknown): string {
  if (typeof tenantId !== 'string' || tenantId.trim() === '')
    throw new InvalidConfigWriteException('a tenant id (a non-blank string) is required');
  return tenantId;
}

export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length > MAX_CONFIG_KEY_LENGTH || !CONFIG_KEY_PATTERN.test(key))
    throw new InvalidConfigWriteException(`the key must match ${CONFIG_KEY_PATTERN} and be at most ${MAX_CONFIG_KEY_LENGTH} characters`);
  return key;
}

export function checkWrite(tenantId: unknown, key: unknown, value: unknown, write: ConfigWrite | undefined): CheckedWrite {
  const expected = write?.expectedVersion;
  if (expected !== undefined && !(Number.isSafeInteger(expected) && expected >= 0))
    throw new InvalidConfigWriteException('expectedVersion must be a whole number >= 0 (0: no stored value yet)');
  const by = write?.updatedBy ?? null;
  if (by !== null && typeof by !== 'string') throw new InvalidConfigWriteException('updatedBy must be a string');
  const json = jsonText(value);
  if (json === undefined) throw new InvalidConfigWriteException('the value must be JSON (not undefined)');
  if (json.length > MAX_CONFIG_VALUE_CHARS)
    throw new InvalidConfigWriteException(`the value is more than ${MAX_CONFIG_VALUE_CHARS} characters of JSON`);
  if (hasUnwritableText(value)) throw new InvalidConfigWriteException(UNWRITABLE_VALUE_PROBLEM);
  return { tenantId: checkTenant(tenantId), key: checkKey(key), json, expectedVersion: expected, updatedBy: by };
}
