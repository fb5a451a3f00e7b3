/** The SQLSTATE of a database error (a pg or PGlite error, or TypeORM's QueryFailedError around one), or undefined. */
export function sqlState(err: unknown): string | undefined {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null | undefined;
  const code = e?.code ?? e?.driverError?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Whether PostgreSQL refused a row for what it holds, so that writing the same row again can never succeed: a data
 * exception (class 22: a number out of range, a string too long, an invalid byte sequence), an integrity constraint it
 * breaks (class 23: NOT NULL, CHECK, a foreign key; not a unique or exclusion violation, which another writer can cause),
 * or a row larger than the server takes (54000). Anything else says that the write failed, not that the row is bad: a
 * lock or statement timeout, a trigger's RAISE (P0001), a full disk, a read-only or shutting-down server, a lost
 * connection. A trigger that means to refuse a row for good raises a class 22 or 23 code (`ERRCODE = 'check_violation'`).
 */
export function isRowRefused(err: unknown): boolean {
  const code = sqlState(err);
  if (!code) return false;
  if (code.startsWith('22')) return true;
  if (code.startsWith('23')) return code !== '23505' && code !== '23P01';
  return code === '54000';
}
