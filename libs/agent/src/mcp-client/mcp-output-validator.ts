import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/client';

/**
 * The SDK client's validator of tool results (`outputSchema` against `structuredContent`): it accepts every value.
 *
 * The SDK's default compiles each listed tool's outputSchema with ajv and native RegExp, and runs it synchronously
 * on every result. The server writes both the schema and the content, so that check proves nothing about the server,
 * and it is a way to stall the whole app: a `pattern` like '^(a|a)+$' against 'a…ab' backtracks for minutes, a
 * `uniqueItems` on an array of objects compares every pair, a schema nested thousands deep overflows the stack at
 * tools/list, and none of it can be interrupted by a timer (the call's timeoutMs included). We do not rely on
 * the check: a result is untrusted data the model reads (`valueOf`), capped in size (`maxResultBytes`), and the
 * guard, not the result, decides what runs next.
 */
export class AcceptingOutputValidator implements jsonSchemaValidator {
  getValidator<T>(_schema: JsonSchemaType): JsonSchemaValidator<T> {
    return (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined });
  }
}
