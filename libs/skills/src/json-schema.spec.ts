import { compileSchema, MAX_SCHEMA_DEPTH, schemaProblem } from './json-schema';

describe('skill parameter schemas', () => {
  it('matches patterns in linear time: a catastrophic pattern against a hostile string answers at once', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, required: ['s'] };
    expect(schemaProblem(schema)).toBeNull();
    const validate = compileSchema(schema);
    const started = performance.now();
    expect(validate({ s: `${'a'.repeat(50_000)}b` })).toBe(false);
    // With JavaScript's backtracking RegExp, 40 characters already take seconds; RE2 is linear.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(validate({ s: 'aaaa' })).toBe(true);
  });

  it('still applies patterns and patternProperties, case flags included', () => {
    const validate = compileSchema({
      type: 'object',
      properties: { sku: { type: 'string', pattern: '^[A-Z]-\\d{3}$' } },
      patternProperties: { '^x_': { type: 'number' } },
    });
    expect(validate({ sku: 'A-100', x_a: 1 })).toBe(true);
    expect(validate({ sku: 'a-100' })).toBe(false);
    expect(validate({ sku: 'A-100', x_a: 'one' })).toBe(false);
  });

  it('refuses a pattern RE2 cannot run, saying why', () => {
    const problem = schemaProblem({ type: 'object', properties: { s: { type: 'string', pattern: '^(?=a)a+$' } } });
    expect(problem).toMatch(/linear-time RE2 engine \(no lookaround, no backreferences\)/);
  });

  it('refuses a schema nested deeper than the limit instead of overflowing the stack', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20_000; i++) deep = { type: 'object', properties: { a: deep } };
    expect(schemaProblem(deep)).toBe(`parameters nest deeper than ${MAX_SCHEMA_DEPTH} levels`);
    let ok: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 10; i++) ok = { type: 'object', properties: { a: ok } };
    expect(schemaProblem(ok)).toBeNull();
  });
});
