import { isTenantTypeSupported, tenantSpellingProblem } from './tenant-spelling';

describe('the one spelling of a tenant id', () => {
  it('an integer tenant column takes plain whole numbers only', () => {
    for (const ok of ['0', '1', '-5', '9007199254740993', '123456789012345678'])
      expect([ok, tenantSpellingProblem(ok, ['integer'])]).toEqual([ok, undefined]);
    for (const bad of ['01', '+1', '0001', '1.0', '1e3', '0x1', '1_0', '-0', '', 'acme', '1234567890123456789012'])
      expect([bad, tenantSpellingProblem(bad, ['bigint'])]).toEqual([bad, expect.stringMatching(/whole number written plainly/)]);
  });

  it('a uuid tenant column takes the lower-case hyphenated form only', () => {
    const id = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
    expect(tenantSpellingProblem(id, ['uuid'])).toBeUndefined();
    for (const bad of [id.toUpperCase(), `{${id}}`, id.replace(/-/g, '')])
      expect(tenantSpellingProblem(bad, ['uuid'])).toMatch(/lower-case hyphenated uuid/);
  });

  it('any tenant id: no surrounding spaces or control characters; text columns take the rest as given', () => {
    for (const bad of [' acme', 'acme ', '\tacme', 'ac\u0000me', 'acme\u0085'])
      for (const types of [undefined, ['text']])
        expect(tenantSpellingProblem(bad, types)).toMatch(/surrounding spaces or control characters/);
    for (const ok of ['acme', '007', 'Acme Corp', 'constructor'])
      expect(tenantSpellingProblem(ok, ['text', 'character varying(64)'])).toBeUndefined();
  });

  it('a numeric tenant column takes plain whole numbers only (attack: caller ids 1.0, 1e0 and 01 all read tenant 1)', () => {
    for (const type of ['numeric', 'numeric(12,0)', 'numeric(12,2)']) {
      for (const ok of ['1', '0', '-3', '123456789012345678901234567890'])
        expect([type, ok, tenantSpellingProblem(ok, [type])]).toEqual([type, ok, undefined]);
      for (const bad of ['1.0', '1e0', '01', '1.', '.1', '+1', '1E0', '0.0', '-0', 'NaN', 'Infinity'])
        expect([type, bad, tenantSpellingProblem(bad, [type])]).toEqual([type, bad, expect.stringMatching(/no fraction or exponent/)]);
    }
  });

  it('a tenant column of a type with several spellings per value takes no tenant id at all', () => {
    for (const type of ['citext', 'real', 'double precision', 'money', 'name', 'text (nondeterministic collation "ci")', 'inet', 'date'])
      for (const id of ['acme', '1'])
        expect([type, tenantSpellingProblem(id, [type])]).toEqual([type, expect.stringMatching(/cannot be matched by one spelling/)]);
    for (const type of [
      'text',
      'character varying',
      'character varying(64)',
      'character(8)',
      'integer',
      'bigint',
      'smallint',
      'numeric',
      'uuid',
    ])
      expect([type, isTenantTypeSupported(type)]).toEqual([type, true]);
    expect(isTenantTypeSupported('citext')).toBe(false);
  });
});
