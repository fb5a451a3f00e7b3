import { tenantSpellingProblem } from './business-skills';

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
});
