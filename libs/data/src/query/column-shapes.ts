import { queryRows } from '@zmodu/core';
import type { ColumnShape } from '../sql/sql-guard';

/** The first object id of a database's own objects: every type below it is PostgreSQL's (FirstNormalObjectId). */
const FIRST_NORMAL_OBJECT_ID = 16384;
/** pg_catalog's oid (PG_CATALOG_NAMESPACE), the same on every server. */
const PG_CATALOG_NAMESPACE = 11;

interface AttributeRow {
  schema: string;
  table: string;
  name: string;
  type: number | string;
}

interface TypeRow {
  oid: number | string;
  kind: string;
  base: number | string;
  name: string;
  namespace: number | string;
}

/**
 * How each column of the tables reaches a model's statement, in column order, by `schema.table`: a column of a type
 * of PostgreSQL's own as it is; a domain over one as that type; a column of any other type (an enum, a composite, a
 * range, an extension's type, an array of one) as its text. An application's type carries what its owner attached to
 * it (casts, a cast to json that to_json calls without checking EXECUTE, a domain's CHECK on a value cast to it), and
 * each runs a function that is not pg_catalog's; a value of PostgreSQL's own type runs none. Every name here is
 * schema-qualified (the application's search_path may put another schema first). A missing table has no entry.
 */
export async function readColumnShapes(
  db: { query(sql: string, params?: unknown[]): Promise<unknown> },
  tables: ReadonlyArray<{ readonly schema: string; readonly table: string }>,
): Promise<Map<string, ColumnShape[]>> {
  const out = new Map<string, ColumnShape[]>();
  if (!tables.length) return out;
  const attributes = await queryRows<AttributeRow>(
    db,
    `SELECT n.nspname::pg_catalog.text AS schema, c.relname::pg_catalog.text AS table, a.attname::pg_catalog.text AS name,
            a.atttypid::pg_catalog.int8 AS type
       FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
       JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
      WHERE a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
        AND c.relname OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.text[])
      ORDER BY n.nspname, c.relname, a.attnum`,
    [[...new Set(tables.map((t) => t.table))]],
  );
  const wanted = new Set(tables.map((t) => `${t.schema}.${t.table}`));
  const types = new Map<number, TypeRow>();
  // Each column's type, then the base types of domains (a domain may be over a domain), until none is missing.
  let missing = [...new Set(attributes.map((a) => Number(a.type)))];
  while (missing.length) {
    const rows = await queryRows<TypeRow>(
      db,
      `SELECT t.oid::pg_catalog.int8 AS oid, t.typtype::pg_catalog.text AS kind, t.typbasetype::pg_catalog.int8 AS base,
              t.typname::pg_catalog.text AS name, t.typnamespace::pg_catalog.int8 AS namespace
         FROM pg_catalog.pg_type t WHERE t.oid OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.int8[]::pg_catalog.oid[])`,
      [missing],
    );
    for (const r of rows) types.set(Number(r.oid), r);
    missing = [...new Set(rows.filter((r) => r.kind === 'd').map((r) => Number(r.base)))].filter((oid) => !types.has(oid));
  }
  for (const a of attributes) {
    const key = `${a.schema}.${a.table}`;
    if (!wanted.has(key)) continue;
    const list = out.get(key) ?? [];
    list.push(shapeOf(a.name, Number(a.type), types));
    out.set(key, list);
  }
  return out;
}

function isOwn(t: TypeRow | undefined): boolean {
  return t !== undefined && Number(t.oid) < FIRST_NORMAL_OBJECT_ID && Number(t.namespace) === PG_CATALOG_NAMESPACE;
}

function shapeOf(name: string, oid: number, types: ReadonlyMap<number, TypeRow>): ColumnShape {
  let t = types.get(oid);
  if (t?.kind !== 'd') return isOwn(t) ? { name, read: 'as_is' } : { name, read: 'text' };
  // A domain: read as its base type (a cast from a domain to its base calls nothing), when that is PostgreSQL's own.
  for (let depth = 0; t?.kind === 'd' && depth < 64; depth++) t = types.get(Number(t.base));
  return isOwn(t) ? { name, read: 'base', base: t!.name } : { name, read: 'text' };
}
