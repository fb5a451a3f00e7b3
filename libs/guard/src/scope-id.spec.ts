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

  it.each(['t1', 'team_a', 'constructor', '__proto__', '00', 'x'.repeat(MAX_SCOPE_ID_LENGTH), 'équipe'])('takes %j', (value) => {
    expect(scopeIdProblem('tenantId', value)).toBeNull();
    expect(isScopeId(value)).toBe(true);
  });
});
