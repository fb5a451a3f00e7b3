import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { canonicalJson } from '@zmodu/core';
import {
  CONTENT_KEYWORD_PROBLEM,
  IGNORED_KEYWORD_PROBLEM,
  KEYWORD_FOR_OTHER_TYPE_PROBLEM,
  REF_OUTSIDE_SCHEMAS_PROBLEM,
  UNKNOWN_FORMAT_PROBLEM,
  UNKNOWN_KEYWORD_PROBLEM,
} from './skill.messages';

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

/** ajv's warnings all say that something of a schema is ignored: here each one refuses the schema instead. */
const refuseWarnings = {
  log: () => undefined,
  warn: (...args: unknown[]) => {
    throw new Error(args.map(String).join(' '));
  },
  error: (...args: unknown[]) => {
    throw new Error(args.map(String).join(' '));
  },
};

/**
 * strictSchema: an unknown keyword, an unknown format or a keyword ajv would ignore ("then" without "if", ...) fails
 * the compilation instead of a console warning. Types are not required beside every keyword (strictTypes off):
 * `keywordProblem` refuses a keyword that cannot apply to the type declared beside it.
 */
const ajv = new Ajv({
  allErrors: true,
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowMatchingProperties: true,
  allowUnionTypes: true,
  coerceTypes: false,
  useDefaults: false,
  logger: refuseWarnings,
  code: { regExp: linearRegExp },
});
// Formats are checked (date, date-time, email, uri, uuid, ...; formatMinimum and its kin), never skipped.
addFormats(ajv);
// Our own annotation: a field marked "x-sensitive": true is masked wherever a call is shown (Redactor.maskSensitive).
ajv.addKeyword({ keyword: 'x-sensitive', schemaType: 'boolean' });
// uniqueItems in linear time (see uniqueItems below), in place of ajv's.
ajv.removeKeyword('uniqueItems');
ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate: uniqueItems });

/**
 * `uniqueItems`, in linear time: each item's canonical JSON (keys sorted) is looked up in a Map. ajv's compares every
 * pair of items that may be objects or arrays (20,000 small objects from the model or an MCP client: 50 s of a blocked
 * event loop per call), and keys scalar items in a plain object, where two '__proto__' items were never seen as equal.
 * Items are equal as JSON values are (ajv's deep equality: key order aside, 1 and 1.0 alike).
 */
function uniqueItems(this: unknown, schema: boolean, data: unknown[]): boolean {
  const validate = uniqueItems as typeof uniqueItems & { errors?: Partial<ErrorObject>[] | null };
  validate.errors = null;
  if (!schema || !Array.isArray(data)) return true;
  const seen = new Map<string, number>();
  for (let i = 0; i < data.length; i++) {
    let key: string;
    try {
      key = canonicalJson(data[i]);
    } catch {
      validate.errors = [{ keyword: 'uniqueItems', message: `item ${i} is nested too deep to compare`, params: { i } }];
      return false;
    }
    const j = seen.get(key);
    if (j !== undefined) {
      validate.errors = [
        { keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, params: { i, j } },
      ];
      return false;
    }
    seen.set(key, i);
  }
  return true;
}

/** Deeper than this, a schema is refused before it is compiled (a hostile schema nested 10,000 deep overflows the stack). */
export const MAX_SCHEMA_DEPTH = 64;

/** Why a schema is unusable for skill parameters, or null when it is fine. */
export function schemaProblem(schema: unknown): string | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'parameters must be a JSON Schema object';
  if ((schema as JsonSchema).type !== 'object')
    return `parameters must describe an object (type: 'object'), got type ${JSON.stringify((schema as JsonSchema).type)}`;
  return jsonSchemaProblem(schema, 'parameters');
}

/**
 * Why `schema` is not a JSON Schema we can enforce, or null: too deep, invalid, a keyword or format the validator
 * does not know or would ignore (told with its path in the schema), or a pattern RE2 cannot run. `subject` opens the
 * message ('parameters', 'the schema', ...).
 */
export function jsonSchemaProblem(schema: unknown, subject: string): string | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return `${subject} must be a JSON Schema object`;
  if (jsonDepth(schema, MAX_SCHEMA_DEPTH + 1) > MAX_SCHEMA_DEPTH) return `${subject} nest deeper than ${MAX_SCHEMA_DEPTH} levels`;
  try {
    if (!ajv.validateSchema(schema)) return `${subject} is not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}`;
    const ignored = keywordProblem(schema as JsonSchema, subject);
    if (ignored) return ignored;
    ajv.compile(schema);
  } catch (err) {
    const message = (err as Error).message;
    return /regexp/i.test(message)
      ? `${subject} cannot be compiled: a pattern is not supported by the linear-time RE2 engine (no lookaround, no backreferences): ${message}`
      : `${subject} cannot be compiled: ${message}`;
  }
  return null;
}

/** Keywords whose value is one schema, a list of schemas, or schemas by name: where `keywordProblem` looks further. */
const ONE_SCHEMA = ['additionalItems', 'additionalProperties', 'contains', 'else', 'if', 'not', 'propertyNames', 'then'];
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf'];
const SCHEMAS_BY_NAME = ['$defs', 'definitions', 'dependencies', 'patternProperties', 'properties'];
/** Keywords ajv accepts and never checks (annotations of draft-07's content vocabulary). */
const CONTENT = ['contentEncoding', 'contentMediaType', 'contentSchema'];

/**
 * The first segment of a `$ref`'s JSON Pointer fragment that leaves the places where schemas are (properties/x,
 * items/0, not, ...): `examples` in '#/examples/0'; null when it stays in them, or the fragment is no pointer.
 */
function outsideSchemas(ref: string): string | null {
  const hash = ref.indexOf('#');
  if (hash < 0 || ref.length === hash + 1) return null;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(hash + 1));
  } catch {
    return null; // not a pointer ajv can resolve either: it refuses the schema
  }
  if (!pointer.startsWith('/')) return null; // an anchor (#name): ajv finds those only where schemas are
  const segments = pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const index = /^(0|[1-9]\d*)$/;
  // Where the next segment is: a keyword of a schema, a name or an index whose value is a schema, or after `items`.
  let at: 'keyword' | 'name' | 'index' | 'items' = 'keyword';
  for (const segment of segments) {
    if (at === 'name' || (at !== 'keyword' && index.test(segment))) {
      at = 'keyword';
      continue;
    }
    if (at === 'index') return segment;
    // After `items` (one schema, not a list): this segment is a keyword of that schema.
    if (ONE_SCHEMA.includes(segment)) at = 'keyword';
    else if (SCHEMA_LIST.includes(segment)) at = 'index';
    else if (SCHEMAS_BY_NAME.includes(segment)) at = 'name';
    else if (segment === 'items') at = 'items';
    else return segment;
  }
  return null;
}

/**
 * The first keyword of `schema` (or of a schema inside it) that the validator would not enforce, told with its JSON
 * Pointer: an unknown keyword (own keys only: `toString` is not a keyword), an unknown format, a keyword that cannot
 * apply to the type declared beside it (`maximum` on a string, a number format on a string), or one ajv ignores on
 * its own ("then" without "if"). Annotations (title, description, default, examples, ...) are known and not checks.
 */
function keywordProblem(root: JsonSchema, subject: string): string | null {
  const stack: Array<[unknown, string]> = [[root, '#']];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) continue;
    const schema = node as JsonSchema;
    const declared = declaredTypes(schema.type);
    for (const keyword of Object.keys(schema)) {
      if (!Object.hasOwn(ajv.RULES.keywords, keyword)) return UNKNOWN_KEYWORD_PROBLEM(subject, keyword, path);
      const rule = Object.hasOwn(ajv.RULES.all, keyword) ? ajv.RULES.all[keyword] : undefined;
      const appliesTo = typeof rule === 'object' ? rule.definition.type : [];
      if (declared && appliesTo.length && !appliesTo.some((t) => applies(declared, t)))
        return KEYWORD_FOR_OTHER_TYPE_PROBLEM(subject, JSON.stringify(keyword), path, appliesTo, declared);
    }
    if (Object.hasOwn(schema, 'format')) {
      const format = schema.format;
      if (typeof format !== 'string' || !Object.hasOwn(ajv.formats, format))
        return UNKNOWN_FORMAT_PROBLEM(subject, String(format), path, Object.keys(ajv.formats));
      const checks = formatType(ajv.formats[format]);
      if (declared && !applies(declared, checks))
        return KEYWORD_FOR_OTHER_TYPE_PROBLEM(subject, `format ${JSON.stringify(format)}`, path, [checks], declared);
    }
    if ((Object.hasOwn(schema, 'then') || Object.hasOwn(schema, 'else')) && !Object.hasOwn(schema, 'if'))
      return IGNORED_KEYWORD_PROBLEM(subject, Object.hasOwn(schema, 'then') ? 'then' : 'else', path, 'there is no "if" beside it');
    if (Object.hasOwn(schema, 'if') && !Object.hasOwn(schema, 'then') && !Object.hasOwn(schema, 'else'))
      return IGNORED_KEYWORD_PROBLEM(subject, 'if', path, 'there is no "then" or "else" beside it');
    if (Object.hasOwn(schema, 'additionalItems') && !Array.isArray(schema.items))
      return IGNORED_KEYWORD_PROBLEM(subject, 'additionalItems', path, '"items" beside it is not a list of schemas');
    // ajv knows the content keywords as annotations only: a JSON string that breaks its contentSchema passed.
    const content = CONTENT.find((keyword) => Object.hasOwn(schema, keyword));
    if (content) return CONTENT_KEYWORD_PROBLEM(subject, content, path);
    // A $ref into examples, default, const or enum reaches a schema this walk never checks (ajv compiles it all the same).
    if (Object.hasOwn(schema, '$ref') && typeof schema.$ref === 'string') {
      const outside = outsideSchemas(schema.$ref);
      if (outside) return REF_OUTSIDE_SCHEMAS_PROBLEM(subject, path, schema.$ref, outside);
    }
    const at = (keyword: string) => `${path}/${pointerSegment(keyword)}`;
    for (const keyword of ONE_SCHEMA) if (Object.hasOwn(schema, keyword)) stack.push([schema[keyword], at(keyword)]);
    if (Object.hasOwn(schema, 'items')) {
      const items = schema.items;
      if (Array.isArray(items)) items.forEach((s, i) => stack.push([s, `${at('items')}/${i}`]));
      else stack.push([items, at('items')]);
    }
    for (const keyword of SCHEMA_LIST)
      if (Object.hasOwn(schema, keyword) && Array.isArray(schema[keyword]))
        (schema[keyword] as unknown[]).forEach((s, i) => stack.push([s, `${at(keyword)}/${i}`]));
    for (const keyword of SCHEMAS_BY_NAME) {
      const byName = Object.hasOwn(schema, keyword) ? schema[keyword] : undefined;
      if (byName === null || typeof byName !== 'object' || Array.isArray(byName)) continue;
      // dependencies: a schema, or a list of property names (not a schema), per property.
      for (const [name, sub] of Object.entries(byName)) stack.push([sub, `${at(keyword)}/${pointerSegment(name)}`]);
    }
  }
  return null;
}

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

/** The types a schema declares with `type`, or undefined when it declares none (any type). */
function declaredTypes(type: unknown): readonly string[] | undefined {
  if (typeof type === 'string') return [type];
  return Array.isArray(type) && type.every((t) => typeof t === 'string') ? (type as string[]) : undefined;
}

/** Whether a keyword checking values of type `t` applies to one of the declared types (an integer is a number). */
function applies(declared: readonly string[], t: string): boolean {
  return declared.includes(t) || (t === 'number' && declared.includes('integer'));
}

/** The type of value a format checks: 'number' for int32, float, ...; 'string' for the rest. */
function formatType(format: unknown): JsonType {
  return format !== null && typeof format === 'object' && !(format instanceof RegExp) && (format as { type?: unknown }).type === 'number'
    ? 'number'
    : 'string';
}

function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
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
