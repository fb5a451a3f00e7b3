import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';

/** A JSON Schema document (draft-07 / 2019-09 keywords as ajv understands them). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** The schema of a skill that takes no arguments. */
export const EMPTY_PARAMETERS: JsonSchema = Object.freeze({ type: 'object', properties: {}, additionalProperties: false });

/**
 * `pattern` and `patternProperties` run on RE2 (re2js, linear time), not on JavaScript's backtracking RegExp: the
 * string a pattern is matched against comes from the model (or an MCP client), and `^(a+)+$` against 'aaaa...b' would
 * block the event loop for minutes. RE2 has no lookaround and no backreferences; a schema that uses them is refused.
 */
const linearRegExp = Object.assign(
  (pattern: string, flags: string) => {
    const re = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
    // ajv keys its compiled patterns by toString(): each pattern needs its own.
    return { test: (text: string) => re.matcher(text).find(), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'linearRegExp' },
);

const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false, code: { regExp: linearRegExp } });

/** Deeper than this, a schema is refused before it is compiled (a hostile schema nested 10,000 deep overflows the stack). */
export const MAX_SCHEMA_DEPTH = 64;

/** Why a schema is unusable for skill parameters, or null when it is fine. */
export function schemaProblem(schema: unknown): string | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'parameters must be a JSON Schema object';
  if ((schema as JsonSchema).type !== 'object')
    return `parameters must describe an object (type: 'object'), got type ${JSON.stringify((schema as JsonSchema).type)}`;
  if (jsonDepth(schema, MAX_SCHEMA_DEPTH + 1) > MAX_SCHEMA_DEPTH) return `parameters nest deeper than ${MAX_SCHEMA_DEPTH} levels`;
  try {
    if (!ajv.validateSchema(schema)) return `parameters is not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}`;
    ajv.compile(schema);
  } catch (err) {
    const message = (err as Error).message;
    return /regexp/i.test(message)
      ? `parameters cannot be compiled: a pattern is not supported by the linear-time RE2 engine (no lookaround, no backreferences): ${message}`
      : `parameters cannot be compiled: ${message}`;
  }
  return null;
}

/** How deep objects and arrays nest in `value`, counted up to `limit` (no recursion, so no stack to overflow). */
export function jsonDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) max = d;
    if (max >= limit) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/** Compile once (ajv caches by schema identity). */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  return ajv.compile(schema);
}

export interface ArgumentProblem {
  readonly path: string;
  readonly message: string;
}

export function describeErrors(errors: ErrorObject[] | null | undefined): ArgumentProblem[] {
  return (errors ?? []).map((e) => {
    let path = e.instancePath || '/';
    if (e.keyword === 'required') path = `${e.instancePath}/${String(e.params.missingProperty)}`;
    if (e.keyword === 'additionalProperties') path = `${e.instancePath}/${String(e.params.additionalProperty)}`;
    const message = e.keyword === 'additionalProperties' ? 'is not an accepted argument' : (e.message ?? 'is invalid');
    return { path, message };
  });
}
