import { isActionClass, normalizeActionClass } from '@zmodu/guard/internal';
import { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
import { EMPTY_PARAMETERS, JsonSchema, schemaProblem } from './json-schema';
import { isStandardSchema, StandardParameters } from './standard-schema';
import { dtoParameters, isDtoClass } from './dto-parameters';
import {
  DEFAULT_SKILL_TIMEOUT_MS,
  MAX_SKILL_TIMEOUT_MS,
  SKILL_NAME_MAX_LENGTH,
  SKILL_NAME_PATTERN,
  SkillAuditMode,
  SkillOptions,
} from './skill-options';
import { NormalizedSkillOptions } from './skill-definition';

/** Check a skill declaration and fill its defaults. Throws InvalidSkillDefinitionException saying what to fix. */
export function validateSkillOptions(options: SkillOptions): NormalizedSkillOptions {
  if (options === null || typeof options !== 'object') throw new InvalidSkillDefinitionException(undefined, 'options are missing');
  const { name } = options;
  const fail = (problem: string): never => {
    throw new InvalidSkillDefinitionException(name, problem);
  };
  if (typeof name !== 'string' || !SKILL_NAME_PATTERN.test(name) || name.length > SKILL_NAME_MAX_LENGTH)
    fail(
      `name must be lower-case dotted words (letters, digits, '_'), at most ${SKILL_NAME_MAX_LENGTH} characters, like 'order.draft' (got ${JSON.stringify(name)})`,
    );
  if (options.action !== undefined && !isActionClass(options.action))
    fail(`action must be 'read', 'propose' or 'execute' (got ${JSON.stringify(options.action)})`);
  if (typeof options.description !== 'string' || options.description.trim() === '')
    fail('description must be a non-empty string: the model reads it to choose the skill');
  const declared: unknown = options.parameters;
  const standard = isStandardSchema(declared) ? declared : isDtoClass(declared) ? dtoParameters(declared) : undefined;
  const parameters = standard ? standardJsonSchema(standard, fail) : ((options.parameters as JsonSchema | undefined) ?? EMPTY_PARAMETERS);
  const problem = schemaProblem(parameters);
  if (problem) fail(standard ? `${problem} (the JSON Schema that the ${standard['~standard'].vendor} schema gives)` : problem);
  if (options.requiredPermission !== undefined && (typeof options.requiredPermission !== 'string' || options.requiredPermission === ''))
    fail('requiredPermission must be a non-empty string when given');
  const timeoutMs = options.timeoutMs ?? DEFAULT_SKILL_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_SKILL_TIMEOUT_MS)
    fail(`timeoutMs must be a whole number of ms between 1 and ${MAX_SKILL_TIMEOUT_MS} (got ${String(options.timeoutMs)})`);
  if (options.tenantScoped !== undefined && typeof options.tenantScoped !== 'boolean') fail('tenantScoped must be a boolean');
  if (options.cost !== undefined && !(typeof options.cost === 'number' && options.cost >= 0 && Number.isFinite(options.cost)))
    fail('cost must be a finite number >= 0');
  if (options.staged !== undefined && typeof options.staged !== 'boolean') fail('staged must be a boolean');
  if (options.idempotent !== undefined && typeof options.idempotent !== 'boolean') fail('idempotent must be a boolean');
  if (options.staged === true && normalizeActionClass(options.action) !== 'execute')
    fail("a staged skill changes state when the pipeline runs it: declare it action: 'execute'");
  const audit = auditOptions(options.audit, fail);
  return Object.freeze({
    name,
    action: normalizeActionClass(options.action),
    description: options.description,
    parameters,
    ...(standard ? { standard } : {}),
    requiredPermission: options.requiredPermission,
    timeoutMs,
    tenantScoped: options.tenantScoped ?? true,
    cost: options.cost,
    staged: options.staged === true,
    idempotent: options.idempotent ?? normalizeActionClass(options.action) === 'read',
    audit,
  });
}

const AUDIT_KEYS = new Set(['args', 'result']);

/** `audit` checked: own keys `args` and `result` only, each 'full' or 'digest' (default 'full'). */
function auditOptions(raw: unknown, fail: (problem: string) => never): NormalizedSkillOptions['audit'] {
  if (raw === undefined) return Object.freeze({ args: 'full', result: 'full' });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail("audit must be an object such as { args: 'digest', result: 'digest' }");
  for (const key of Reflect.ownKeys(raw as object))
    if (typeof key !== 'string' || !AUDIT_KEYS.has(key)) fail(`audit.${String(key)}: no such field (the fields are args and result)`);
  const mode = (key: 'args' | 'result'): SkillAuditMode => {
    const value = Object.hasOwn(raw as object, key) ? (raw as Record<string, unknown>)[key] : undefined;
    if (value === undefined) return 'full';
    if (value !== 'full' && value !== 'digest') fail(`audit.${key} must be 'full' or 'digest' (got ${JSON.stringify(value)})`);
    return value as SkillAuditMode;
  };
  return Object.freeze({ args: mode('args'), result: mode('result') });
}

/**
 * The JSON Schema a Standard Schema gives of its input (draft-07, what the validator and the model providers read),
 * without its `$schema`. One that cannot give it is refused: the model must see what it may send.
 */
function standardJsonSchema(standard: StandardParameters, fail: (problem: string) => never): JsonSchema {
  const { vendor, jsonSchema } = standard['~standard'];
  if (typeof jsonSchema?.input !== 'function')
    fail(
      `parameters is a ${vendor} schema that cannot give its JSON Schema (no ~standard.jsonSchema): the model must see the ` +
        `arguments' schema. Use a library that implements Standard JSON Schema (zod 4.2 or later), or give parameters as JSON Schema`,
    );
  let derived: Record<string, unknown>;
  try {
    derived = jsonSchema!.input({ target: 'draft-07' });
  } catch (err) {
    return fail(`parameters is a ${vendor} schema whose JSON Schema could not be made: ${(err as Error)?.message ?? String(err)}`);
  }
  if (derived === null || typeof derived !== 'object' || Array.isArray(derived))
    fail(`parameters is a ${vendor} schema whose JSON Schema is not an object`);
  const { $schema: _drop, ...rest } = derived;
  return Object.freeze(rest) as JsonSchema;
}
