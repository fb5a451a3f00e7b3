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
  return { tenantId: checkTenant(tenantId), key: checkKey(key), json, expectedVersion: expected, updatedBy: by };
}
