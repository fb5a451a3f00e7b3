import { DataMessages } from './data.messages';
import { InvalidIdentifierException } from './exceptions/invalid-identifier.exception';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Check an identifier from configuration and quote it for SQL. */
export function quoteIdent(name: string, what: string): string {
  if (typeof name !== 'string' || !IDENT.test(name)) throw new InvalidIdentifierException(DataMessages.identifierInvalid(what, name));
  return `"${name}"`;
}

export function qualifiedTable(table: string, schema?: string): string {
  return schema ? `${quoteIdent(schema, 'schema')}.${quoteIdent(table, 'table')}` : quoteIdent(table, 'table');
}

/** A trusted application statement with a single tenant bind, as `$1`. */
export function tenantBound(sql: string, what: string): string {
  if (/\$1\b/.test(sql) && !/\$[2-9]/.test(sql) && !sql.includes('?')) return sql;
  const marks = sql.split('?').length - 1;
  if (marks === 1 && !/\$\d/.test(sql)) return sql.replace('?', '$1');
  throw new InvalidIdentifierException(DataMessages.tenantBindMissing(what));
}
