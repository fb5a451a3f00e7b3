import { ownOptions } from '@zmodu/core';
import { compileSchema, describeErrors, jsonSchemaProblem } from '@zmodu/skills/internal';
import { JsonSchema } from '@zmodu/skills';
import type { ValidateFunction } from 'ajv';
import type { AdminConfigOptions, ConfigKeySpec, ConfigValueType } from './admin-config.types';
import {
  CONFIG_KEY_PATTERN,
  hasUnwritableText,
  jsonText,
  MAX_CONFIG_KEY_LENGTH,
  MAX_CONFIG_VALUE_CHARS,
  UNWRITABLE_VALUE_PROBLEM,
} from './config-write';

/** A declared key, checked at boot, with the compiled check of its values. */
export interface DeclaredConfigKey {
  readonly key: string;
  readonly type: ConfigValueType;
  readonly mutable: boolean;
  readonly default: unknown;
  readonly description: string | null;
  /** The problems of a value (empty: it fits). */
  readonly check: (value: unknown) => string[];
}

const TYPE_NAMES = ['number', 'integer', 'string', 'boolean'] as const;
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The checker of a value type: a JSON type name or a JSON Schema (finite numbers only, JSON only, bounded size). */
function checkerOf(type: ConfigValueType, field: string, fail: (field: string, problem: string) => never): DeclaredConfigKey['check'] {
  const schema: JsonSchema = typeof type === 'string' ? { type } : type;
  if (typeof type === 'string' && !(TYPE_NAMES as readonly string[]).includes(type))
    fail(`${field}.type`, `must be one of ${TYPE_NAMES.join(', ')} or a JSON Schema object`);
  if (typeof type !== 'string' && !isPlainObject(type))
    fail(`${field}.type`, `must be one of ${TYPE_NAMES.join(', ')} or a JSON Schema object`);
  // The checks of skill parameters: a keyword or format the validator would ignore is refused, with its path.
  const problem = jsonSchemaProblem(schema, 'the schema');
  if (problem) fail(`${field}.type`, `is not a JSON Schema we can enforce: ${problem}`);
  const validate: ValidateFunction = compileSchema(schema);
  return (value) => {
    const json = jsonText(value);
    if (json === undefined) return ['the value must be JSON'];
    if (json.length > MAX_CONFIG_VALUE_CHARS) return [`the value is more than ${MAX_CONFIG_VALUE_CHARS} characters of JSON`];
    if (hasUnwritableText(value)) return [UNWRITABLE_VALUE_PROBLEM];
    // A value must survive a JSON round trip unchanged (no NaN or Infinity turned into null on the way).
    if (!validate(JSON.parse(json)) || !validate(value))
      return describeErrors(validate.errors).map((p) => `${p.path === '/' ? 'value' : `value${p.path}`} ${p.message}`);
    return [];
  };
}

/** The `config` option checked once, at boot: a Map of the declared keys (own keys only). */
export function resolveConfigKeys(raw: unknown, fail: (field: string, problem: string) => never): ReadonlyMap<string, DeclaredConfigKey> {
  if (!isPlainObject(raw)) fail('config', "must be { keys: { 'orders.maxDraft': { type: 'integer', mutable: true } } }");
  const keys = (raw as Partial<AdminConfigOptions>).keys;
  if (keys !== undefined && !isPlainObject(keys)) fail('config.keys', 'must be an object of key specs by key name');
  const declared = new Map<string, DeclaredConfigKey>();
  for (const key of Object.keys(keys ?? {})) {
    const field = `config.keys[${JSON.stringify(key)}]`;
    if (key.length > MAX_CONFIG_KEY_LENGTH || !CONFIG_KEY_PATTERN.test(key))
      fail(field, `has a name that is not ${CONFIG_KEY_PATTERN} (at most ${MAX_CONFIG_KEY_LENGTH} characters)`);
    const given = (keys as Record<string, unknown>)[key];
    if (!isPlainObject(given)) fail(field, "must be { type, mutable?, default?, description? }, e.g. { type: 'integer', mutable: true }");
    const spec = ownOptions(given as unknown as ConfigKeySpec);
    if (spec.type === undefined) fail(`${field}.type`, `is required: one of ${TYPE_NAMES.join(', ')} or a JSON Schema object`);
    if (spec.mutable !== undefined && typeof spec.mutable !== 'boolean') fail(`${field}.mutable`, 'must be a boolean');
    if (spec.description !== undefined && typeof spec.description !== 'string') fail(`${field}.description`, 'must be a string');
    const check = checkerOf(spec.type as ConfigValueType, field, fail);
    const hasDefault = Object.hasOwn(given as object, 'default') && spec.default !== undefined;
    if (hasDefault) {
      const problems = check(spec.default);
      if (problems.length) fail(`${field}.default`, `does not fit the key's type: ${problems.join('; ')}`);
    }
    declared.set(
      key,
      Object.freeze({
        key,
        type: spec.type as ConfigValueType,
        mutable: spec.mutable === true,
        default: hasDefault ? (JSON.parse(JSON.stringify(spec.default)) as unknown) : null,
        description: spec.description ?? null,
        check,
      }),
    );
  }
  return declared;
}
