import type { JsonSchemaArgs } from './json-schema-args';

/**
 * Standard Schema (https://standardschema.dev): the interface zod 4, valibot and arktype share, and what Nest 12's
 * StandardSchemaValidationPipe validates with. Its types are copied here, as the specification invites, so that
 * @zmodu/skills depends on no schema library: a skill's `parameters` may be one (its handler's argument type is
 * inferred from it), and the JSON Schema that the model and MCP clients see is the one it gives of its input
 * (Standard JSON Schema, `~standard.jsonSchema`: zod 4.2 and later implement it).
 */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

export type StandardSchemaResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

export interface StandardParameters<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;
    };
  };
}

/**
 * The arguments a handler receives for `parameters`: a DTO class's instance, a Standard Schema's output, the value of
 * a JSON Schema written `as const` (JsonSchemaArgs), else a JSON object.
 */
export type SkillArgs<P> = P extends abstract new (...args: never[]) => infer I
  ? I
  : P extends { readonly '~standard': { readonly types?: { readonly output: infer O } | undefined } }
    ? unknown extends O
      ? Record<string, unknown>
      : O
    : JsonSchemaArgs<P>;

/** Whether `value` is a Standard Schema (version 1, with a validate function). */
export function isStandardSchema(value: unknown): value is StandardParameters {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  const standard = (value as { '~standard'?: unknown })['~standard'];
  return (
    standard !== null &&
    typeof standard === 'object' &&
    (standard as { version?: unknown }).version === 1 &&
    typeof (standard as { validate?: unknown }).validate === 'function'
  );
}

/** A Standard Schema's issue as the dispatcher tells an argument problem: a JSON pointer and the library's message. */
export function standardProblem(issue: StandardSchemaIssue): { path: string; message: string } {
  const keys = (issue.path ?? []).map((p) => String(typeof p === 'object' && p !== null ? (p as { key: PropertyKey }).key : p));
  return { path: `/${keys.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`, message: String(issue.message) };
}
