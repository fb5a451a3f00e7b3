/**
 * pg / network error codes and SQLSTATEs that mean the database cannot be reached or cannot take writes now (not that a
 * statement is wrong): a retry later may succeed.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300', // too_many_connections
  '53100', // disk_full: nothing can be written until space is freed (the statement itself is fine)
  'ENOSPC',
]);

/** Messages of pg, TypeORM and our embedded (PGlite) driver when there is no usable connection. */
const UNAVAILABLE_MESSAGES = [
  /^Waited \d+ ms for the embedded database session/,
  /^The embedded database (is closed|is not running|worker exited)/,
  /^PGlite pool has ended/,
  /^Cannot use a pool after calling end on the pool/,
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Driver not Connected/,
];

/** True when `err` (or its driverError / cause, a few levels deep) says the database cannot be reached. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; message?: unknown; name?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (e.name === 'ConnectionIsNotSetError' || e.name === 'CannotExecuteNotConnectedError') return true;
    // TypeORM releases a transaction's query runner when its connection emits 'error' (the server ended it: a restart);
    // the transaction's next statement or its COMMIT then fails this way, before anything is sent: nothing committed.
    if (e.name === 'QueryRunnerAlreadyReleasedError' || e.name === 'QueryRunnerProviderAlreadyReleasedError') return true;
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.some((m) => m.test(e.message as string))) return true;
    current = e.driverError ?? e.cause;
  }
  return false;
}
