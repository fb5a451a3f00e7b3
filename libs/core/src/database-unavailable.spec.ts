import { isDatabaseUnavailable } from './database-unavailable';

describe('isDatabaseUnavailable', () => {
  it('a full disk (SQLSTATE 53100, or ENOSPC) is an unavailable database, wrapped or not: a retry later may succeed', () => {
    const pglite = { code: '53100', message: 'could not extend file "base/1/16438_fsm": No space left on device' };
    expect(isDatabaseUnavailable(pglite)).toBe(true);
    expect(isDatabaseUnavailable({ name: 'QueryFailedError', message: 'x', driverError: pglite })).toBe(true);
    expect(isDatabaseUnavailable({ code: 'ENOSPC', message: 'no space left on device, write' })).toBe(true);
  });

  it('a reopen of the embedded database that failed (57P03) is unavailable; a wrong statement is not', () => {
    expect(isDatabaseUnavailable({ code: '57P03', message: 'The embedded database did not open: Aborted()' })).toBe(true);
    expect(isDatabaseUnavailable({ code: '42P01', message: 'relation "nowhere" does not exist' })).toBe(false);
    expect(isDatabaseUnavailable({ code: '23505', message: 'duplicate key value violates unique constraint' })).toBe(false);
  });
});
