/**
 * The rows of an UPDATE or DELETE ... RETURNING through TypeORM's postgres driver, which answers
 * those as [rows, affected]; other statements come back as the rows themselves.
 */
export function returning(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0];
  return result as Record<string, unknown>[];
}

/** The rows of one statement run through anything with TypeORM's `query(sql, params)`. */
export async function queryRows<T = Record<string, unknown>>(
  db: { query(sql: string, params?: unknown[]): Promise<unknown> },
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  return returning(await db.query(sql, params)) as T[];
}
