import Ajv, { ErrorObject, ValidateFunction } from 'ajv';

/** A JSON Schema document (draft-07 / 2019-09 keywords as ajv understands them). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** The schema of a skill that takes no arguments. */
export const EMPTY_PARAMETERS: JsonSchema = Object.freeze({ type: 'object', properties: {}, additionalProperties: false });

const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });

/** Why a schema is unusable for skill parameters, or null when it is fine. */
export function schemaProblem(schema: unknown): string | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'parameters must be a JSON Schema object';
  if ((schema as JsonSchema).type !== 'object')
    return `parameters must describe an object (type: 'object'), got type ${JSON.stringify((schema as JsonSchema).type)}`;
  if (!ajv.validateSchema(schema)) return `parameters is not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}`;
  try {
    ajv.compile(schema);
  } catch (err) {
    return `parameters cannot be compiled: ${(err as Error).message}`;
  }
  return null;
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
