import { isScopeId, MAX_SCOPE_ID_LENGTH, scopeIdProblem } from './scope-id';

describe('scopeIdProblem: one rule for tenant and user ids', () => {
  it.each([
    [undefined, /tenantId is missing/],
    [42, /a number, not a string/],
    [null, /an? object, not a string/],
    ['', /empty/],
    ['   ', /empty/],
    ['0', /no wildcard/],
    [' 0 ', /no wildcard/],
    ['x'.repeat(MAX_SCOPE_ID_LENGTH + 1), /longer than 200/],
    ['t\u0000', /control character/],
    ['t\n1', /control character/],
  ])('refuses %j', (value, message) => {
    expect(scopeIdProblem('tenantId', value)).toMatch(message);
    expect(isScopeId(value)).toBe(false);
  });

  it.each([
    ['lee\u200b', 'U+200B', 'a zero-width space: another user who looks like lee (separation of duties)'],
    ['\u202eeel', 'U+202E', 'a right-to-left override: the name turned around on screen'],
    ['ac\u200dme', 'U+200D', 'a zero-width joiner'],
    ['\ufeffacme', 'U+FEFF', 'a byte order mark'],
    ['acme\u2066', 'U+2066', 'a bidi isolate'],
    ['lee\u00ad', 'U+00AD', 'a soft hyphen'],
    ['lee\u034f', 'U+034F', 'a combining grapheme joiner (default-ignorable)'],
    ['lee\ufe0f', 'U+FE0F', 'a variation selector'],
    ['\u3164', 'U+3164', 'a Hangul filler (shows as a blank letter)'],
    ['lee\u2028x', 'U+2028', 'a line separator'],
    ['lee\u2029x', 'U+2029', 'a paragraph separator'],
    ['lee\ue000', 'U+E000', 'a private-use character'],
    ['lee\u0378', 'U+0378', 'an unassigned code point'],
    ['lee\ud800', 'U+D800', 'a lone surrogate'],
    ['lee\u{e0041}', 'U+E0041', 'a tag character'],
  ])('refuses %j, naming %s (attack: %s)', (value, codePoint) => {
    expect(scopeIdProblem('userId', value)).toContain(`userId holds ${codePoint}`);
    expect(isScopeId(value)).toBe(false);
  });

  it.each([
    ['t\u0085', /control character/, 'a C1 control (next line)'],
    ['t\u009b', /control character/, 'a C1 control (CSI)'],
    ['lee ', /begins or ends with a blank/, 'a trailing blank: another user who looks like lee'],
    ['\u00a0lee', /begins or ends with a blank/, 'a leading no-break space'],
    ['e\u0301quipe', /normalization form C/, 'a decomposed é: another tenant that looks like équipe'],
    ['\u212b', /normalization form C/, 'the angstrom sign, whose NFC is Å'],
  ])('refuses %j (attack: %s)', (value, message) => {
    expect(scopeIdProblem('tenantId', value)).toMatch(message);
    expect(isScopeId(value)).toBe(false);
  });

  it('never repeats the refused value in its problem', () => {
    expect(scopeIdProblem('userId', 'secret\u200bname')).not.toContain('secret');
  });

  it.each([
    't1',
    'team_a',
    'constructor',
    '__proto__',
    '00',
    'x'.repeat(MAX_SCOPE_ID_LENGTH),
    'équipe',
    'a b',
    'lee.smith@example.com',
    '東京',
    'Ωmega',
    '💥',
  ])('takes %j', (value) => {
    expect(scopeIdProblem('tenantId', value)).toBeNull();
    expect(isScopeId(value)).toBe(true);
  });
});
