import { compileSchema, MAX_SCHEMA_DEPTH, schemaProblem } from './json-schema';

/** How many characters `run` reads from strings through String.prototype.charCodeAt (as re2js reads its input). */
function charReadsOf(run: () => void): number {
  const original = String.prototype.charCodeAt;
  let reads = 0;
  String.prototype.charCodeAt = function (this: string, index: number) {
    reads++;
    return original.call(this, index);
  };
  try {
    run();
  } finally {
    String.prototype.charCodeAt = original;
  }
  return reads;
}

/** `value` behind a Proxy that counts each read of its fields and keys into `counter.reads`. */
function counted<T extends object>(value: T, counter: { reads: number }): T {
  return new Proxy(value, {
    get: (target, key, receiver) => (counter.reads++, Reflect.get(target, key, receiver)),
    ownKeys: (target) => (counter.reads++, Reflect.ownKeys(target)),
    getOwnPropertyDescriptor: (target, key) => (counter.reads++, Reflect.getOwnPropertyDescriptor(target, key)),
  });
}

describe('skill parameter schemas', () => {
  it('matches patterns in linear time: a catastrophic pattern against a hostile string answers at once', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, required: ['s'] };
    expect(schemaProblem(schema)).toBeNull();
    const validate = compileSchema(schema);
    const hostile = (n: number) => ({ s: `${'a'.repeat(n)}b` });
    // The steps are counted, not timed: RE2 (re2js) reads the string one character at a time through charCodeAt.
    // JavaScript's backtracking RegExp reads none that way, and 40 characters already take it seconds: the first
    // count, on 20 characters (a millisecond even there), fails before any long string would hang the test.
    const small = charReadsOf(() => expect(validate(hostile(20))).toBe(false));
    expect(small).toBeGreaterThan(0);
    const reads = [5_000, 50_000].map((n) => charReadsOf(() => expect(validate(hostile(n))).toBe(false)));
    // Linear: ten times the string, about ten times the reads (a backtracking engine: 2^n).
    expect(reads[0]).toBeGreaterThanOrEqual(5_000);
    expect(reads[1]).toBeLessThanOrEqual(reads[0] * 11);
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

  it('checks formats: a bad uuid, e-mail or date-time is refused (attack: format "uuid" was ignored and a bad id reached PostgreSQL)', () => {
    const schema = {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        mail: { type: 'string', format: 'email' },
        at: { type: 'string', format: 'date-time' },
      },
    };
    expect(schemaProblem(schema)).toBeNull();
    const validate = compileSchema(schema);
    expect(validate({ id: '123e4567-e89b-12d3-a456-426614174000', mail: 'lee@example.com', at: '2026-01-02T03:04:05Z' })).toBe(true);
    expect(validate({ id: "1' OR '1'='1" })).toBe(false);
    expect(validate.errors).toMatchObject([{ instancePath: '/id', keyword: 'format', params: { format: 'uuid' } }]);
    expect(validate({ mail: 'not an address' })).toBe(false);
    expect(validate({ at: '2026-02-30T00:00:00Z' })).toBe(false);
  });

  it('refuses a keyword the validator would ignore, naming it, its path and what to do (attack: a misspelt keyword checks nothing)', () => {
    const problem = (property: Record<string, unknown>) => schemaProblem({ type: 'object', properties: { 'a/b': property } });
    expect(problem({ type: 'string', maxLenght: 8 })).toBe(
      'parameters has the keyword "maxLenght" at #/properties/a~1b, which the validator does not know and would ignore: ' +
        'remove it, or spell a JSON Schema (draft-07) keyword such as type, properties, required, enum, pattern, format, minimum or maxLength',
    );
    // Own keywords only: `toString` and `constructor` are found on every object's prototype, and ajv took them for keywords.
    expect(problem({ type: 'string', toString: 1 })).toMatch(/^parameters has the keyword "toString" at #\/properties\/a~1b, which/);
    expect(problem({ type: 'string', constructor: {} })).toMatch(/the keyword "constructor"/);
    expect(problem({ type: 'string', format: 'uuidv4' })).toMatch(
      /^parameters has format "uuidv4" at #\/properties\/a~1b, which the validator cannot check and would ignore: use one of date, .*uuid.*, or a pattern$/,
    );
    expect(problem({ type: 'string', format: 'toString' })).toMatch(/format "toString" .* cannot check/);
    expect(problem({ type: 'string', maximum: 10 })).toMatch(
      /"maximum" at #\/properties\/a~1b, which checks only number values while the type there is string, so it would never be checked/,
    );
    expect(problem({ type: 'string', format: 'int32' })).toMatch(/format "int32" at .* checks only number values/);
    expect(problem({ type: 'integer', format: 'int32', minimum: 0 })).toBeNull();
    expect(problem({ type: ['string', 'null'], maxLength: 3 })).toBeNull();
    expect(problem({ anyOf: [{ type: 'string' }, { type: 'number', maxLength: 2 }] })).toMatch(
      /"maxLength" at #\/properties\/a~1b\/anyOf\/1,/,
    );
    expect(problem({ type: 'string', then: { minLength: 1 } })).toMatch(
      /"then" at #\/properties\/a~1b, which the validator would ignore because there is no "if"/,
    );
    expect(problem({ if: { type: 'string' } })).toMatch(/"if" .* no "then" or "else"/);
    expect(problem({ type: 'array', items: { type: 'string' }, additionalItems: false })).toMatch(
      /"additionalItems" .* not a list of schemas/,
    );
    // Deeper places: definitions, dependencies, tuple items; annotations are known keywords.
    expect(schemaProblem({ type: 'object', $defs: { x: { type: 'string', nope: 1 } } })).toMatch(/"nope" at #\/\$defs\/x,/);
    expect(schemaProblem({ type: 'object', dependencies: { a: ['b'], c: { zzz: 1 } } })).toMatch(/"zzz" at #\/dependencies\/c,/);
    expect(problem({ type: 'array', items: [{ type: 'string' }, { type: 'string', formt: 'uuid' }] })).toMatch(
      /"formt" at #\/properties\/a~1b\/items\/1,/,
    );
    expect(problem({ type: 'string', title: 'Id', description: 'The id', default: 'x', examples: ['y'], readOnly: true })).toBeNull();
    // Our own annotation, read by the redactor: known, and only as a boolean.
    expect(problem({ type: 'string', 'x-sensitive': true })).toBeNull();
    expect(problem({ type: 'string', 'x-sensitive': 'yes' })).toMatch(/x-sensitive value must be \["boolean"\]/);
  });

  it('checks uniqueItems in linear time, by value (attack: 10000 objects blocked the event loop for seconds; two "__proto__" items passed as unique)', () => {
    const validate = compileSchema({
      type: 'object',
      properties: { rows: { type: 'array', uniqueItems: true }, keys: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
    });
    // ajv compared every pair of object items: 5 * 10^7 deep comparisons here, seconds on each call.
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ id: i, tags: [i, 'x'] }));
    // The steps are counted, not timed: every read of an item's keys and fields, through a Proxy. A pairwise comparison
    // reads each item once per other item (quadratic: 100 times the reads for ten times the items); ours once each.
    const readsOf = (n: number) => {
      const counter = { reads: 0 };
      expect(validate({ rows: rows.slice(0, n).map((row) => counted(row, counter)) })).toBe(true);
      return counter.reads;
    };
    const reads = [1_000, 10_000].map(readsOf);
    expect(reads[0]).toBeGreaterThanOrEqual(1_000);
    expect(reads[1]).toBeLessThanOrEqual(reads[0] * 11);
    expect(validate({ rows })).toBe(true);
    expect(validate({ rows: [...rows, { tags: [7, 'x'], id: 7 }] })).toBe(false);
    expect(validate.errors).toEqual([
      expect.objectContaining({
        instancePath: '/rows',
        keyword: 'uniqueItems',
        message: 'must NOT have duplicate items (items ## 7 and 10000 are identical)',
      }),
    ]);
    // Scalars were keyed in a plain object, where '__proto__' is no key.
    expect(validate({ keys: ['__proto__', '__proto__'] })).toBe(false);
    expect(validate({ keys: ['constructor', 'toString', 'a'] })).toBe(true);
    expect(validate({ rows: [1, '1', 1.5, [1], { a: 1 }, { a: '1' }, null, false] })).toBe(true);
    expect(validate({ rows: [{ a: { b: 1, c: 2 } }, { a: { c: 2, b: 1 } }] })).toBe(false);
  });

  it('refuses the content keywords, which the validator never checks (attack: a JSON string that broke its contentSchema passed)', () => {
    const problem = (property: Record<string, unknown>) => schemaProblem({ type: 'object', properties: { a: property } });
    expect(problem({ type: 'string', contentMediaType: 'application/json', contentSchema: { type: 'number' } })).toMatch(
      /^parameters has "contentMediaType" at #\/properties\/a, which the validator takes for an annotation and never checks .*: remove it, and check the content in the handler/,
    );
    expect(problem({ type: 'string', contentEncoding: 'base64' })).toMatch(
      /"contentEncoding" at #\/properties\/a, which the validator takes/,
    );
    expect(problem({ type: 'string', contentSchema: { type: 'number' } })).toMatch(/"contentSchema"/);
  });

  it('refuses a $ref into examples, default, const or enum (attack: a keyword that cannot apply, hidden where only a $ref reaches it)', () => {
    const hidden = { type: 'string', maximum: 3 };
    const refused = [
      { type: 'object', properties: { a: { $ref: '#/examples/0' } }, examples: [hidden] },
      { type: 'object', properties: { a: { $ref: '#/properties/b/default' }, b: { default: hidden } } },
      { type: 'object', properties: { a: { $ref: '#/properties/b/enum/0' }, b: { enum: [hidden] } } },
      { type: 'object', properties: { a: { $ref: '#/properties/b/const' }, b: { const: hidden } } },
      { type: 'object', properties: { a: { $ref: '#/anyOf/0/%65xamples/0' } }, anyOf: [{ examples: [hidden] }] },
    ];
    for (const schema of refused)
      expect(schemaProblem(schema)).toMatch(
        /has "\$ref" at #\/properties\/a pointing at .*, inside "(examples|default|enum|const)", which holds data, not schemas/,
      );
    // Where schemas are, the walk checks them itself, and a $ref there is fine.
    expect(schemaProblem({ type: 'object', definitions: { s: hidden }, properties: { a: { $ref: '#/definitions/s' } } })).toMatch(
      /"maximum" at #\/definitions\/s,/,
    );
    const fine = {
      type: 'object',
      definitions: {
        'a/b': { type: 'string' },
        list: { type: 'array', items: [{ type: 'number' }] },
        one: { type: 'array', items: { properties: { x: { type: 'string' } } } },
      },
      properties: {
        a: { $ref: '#/definitions/a~1b' },
        b: { $ref: '#/definitions/list/items/0' },
        c: { $ref: '#/definitions/one/items/properties/x' },
        d: { $ref: '#' },
        e: { anyOf: [{ type: 'null' }, { $ref: '#/properties/a' }] },
        f: { $ref: '#/properties/e/anyOf/1' },
      },
    };
    expect(schemaProblem(fine)).toBeNull();
  });
});
