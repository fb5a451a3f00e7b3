import { loadModule, parseSync } from 'libpg-query';
import { DataMessages } from '../data.messages';
import { SqlParserNotLoadedException } from '../exceptions/sql-parser-not-loaded.exception';

let loading: Promise<void> | null = null;
let ready = false;

/** Load the PostgreSQL parser (libpg_query compiled to WASM) once per process. */
export async function loadSqlParser(): Promise<void> {
  if (ready) return;
  loading ??= loadModule().then(() => {
    ready = true;
  });
  await loading;
}

export function isSqlParserLoaded(): boolean {
  return ready;
}

/** The parse tree of `sql`, as libpg_query's JSON. Throws the parser's error on bad syntax. */
export function parseSql(sql: string): { stmts?: Array<{ stmt: Record<string, unknown> }> } {
  if (!ready) throw new SqlParserNotLoadedException(DataMessages.parserNotLoaded());
  return parseSync(sql) as { stmts?: Array<{ stmt: Record<string, unknown> }> };
}
