/**
 * The TypeScript type of the value a JSON Schema written `as const` accepts, for the keywords skills use: `type`
 * (one, or a list), `enum`, `const`, `properties` with `required`, `additionalProperties`, `items`, `anyOf`/`oneOf`.
 * What it cannot tell is `unknown`; a schema whose keywords are not literal types (a `JsonSchema` variable) gives
 * `Record<string, unknown>` at the top, as before. Used by `defineSkill` and `SkillArgs`: no cast in a handler.
 */
export type JsonSchemaValue<S, Depth extends unknown[] = []> = Depth['length'] extends 8
  ? unknown
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly enum: readonly (infer E)[] }
      ? E
      : S extends { readonly anyOf: readonly (infer A)[] }
        ? JsonSchemaValue<A, [...Depth, 1]>
        : S extends { readonly oneOf: readonly (infer A)[] }
          ? JsonSchemaValue<A, [...Depth, 1]>
          : S extends { readonly type: readonly (infer T)[] }
            ? T extends unknown
              ? TypeOf<T, S, Depth>
              : never
            : S extends { readonly type: infer T }
              ? TypeOf<T, S, Depth>
              : unknown;

type TypeOf<T, S, Depth extends unknown[]> = T extends 'string'
  ? string
  : T extends 'integer' | 'number'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? S extends { readonly items: infer I }
            ? JsonSchemaValue<I, [...Depth, 1]>[]
            : unknown[]
          : T extends 'object'
            ? ObjectOf<S, Depth>
            : unknown;

type RequiredOf<S> = S extends { readonly required: readonly (infer R)[] } ? R & string : never;

type Flatten<T> = { [K in keyof T]: T[K] } & {};

type ObjectOf<S, Depth extends unknown[]> = S extends { readonly properties: infer P }
  ? Flatten<
      { -readonly [K in keyof P & RequiredOf<S>]: JsonSchemaValue<P[K], [...Depth, 1]> } & {
        -readonly [K in Exclude<keyof P, RequiredOf<S>>]?: JsonSchemaValue<P[K], [...Depth, 1]>;
      } & (S extends { readonly additionalProperties: false } ? unknown : { [key: string]: unknown })
    >
  : Record<string, unknown>;

/** The arguments of a JSON Schema of skill parameters: typed when it was written `as const`, else a JSON object. */
export type JsonSchemaArgs<S> = string extends (S extends { readonly type: infer T } ? T : string)
  ? Record<string, unknown>
  : JsonSchemaValue<S> extends infer V extends object
    ? V
    : Record<string, unknown>;
