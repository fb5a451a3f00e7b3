import { queryRows } from '@zmodu/core';
import { FUNCTION_SIGNATURE, someOf, type SqlRunner } from '../fence/tenant-fence';
import { isTenantTypeSupported } from '../tenant-spelling';

/** An entity as the audit sees it: its table, its tenant column (null: shared), its writable columns. */
export interface AuditedEntity {
  readonly name: string;
  readonly table: string;
  readonly schema?: string;
  readonly tenantColumn: string | null | undefined;
  readonly writable?: readonly string[];
}

export type DataFindingCode =
  | 'missing_table'
  | 'missing_tenant_column'
  | 'unique_without_tenant'
  | 'no_tenant_index'
  | 'shared_sequence'
  | 'view'
  | 'tenant_type_mismatch'
  | 'tenant_type_unsupported'
  | 'reader_function'
  | 'json_cast';

export interface DataFinding {
  readonly code: DataFindingCode;
  /** The table (schema-qualified), or the tables, concerned. */
  readonly table: string;
  /** What is wrong and why it matters. */
  readonly detail: string;
  /** What to do. */
  readonly fix: string;
}

export interface DataAuditOptions {
  /**
   * db.query's reader role (the fence's): the functions outside pg_catalog that it may still execute are reported
   * (`reader_function`). Omitted, or a role that does not exist: not looked at.
   */
  readonly readerRole?: string;
}

export interface DataAudit {
  readonly tables: number;
  readonly findings: DataFinding[];
  /**
   * The types of the registered tenant columns (format_type), distinct and sorted; a string type under a
   * nondeterministic collation is given as `text (nondeterministic collation "x")`, which no tenant id matches.
   */
  readonly tenantTypes: string[];
}

interface Relation {
  oid: number;
  relkind: string;
  options: string[] | null;
}

interface Column {
  attnum: number;
  name: string;
  type: string;
  identity: string;
  default: string | null;
  /** The column's collation, when it is nondeterministic (it equates strings that differ: 'ACME' and 'acme'). */
  nondeterministic: string | null;
}

interface Index {
  name: string;
  unique: boolean;
  keys: number[];
  def: string;
}

/**
 * Hazards of the data model that the data skills cannot fix by themselves:
 *  - a UNIQUE constraint over a writable column without the tenant column: entity.create of a
 *    value that another tenant holds is refused, so a write tells whether it exists (an oracle);
 *  - a tenant table with no index that leads with the tenant column: every scoped read scans;
 *  - a sequence (serial, identity) behind a writable tenant table: a new record's id tells how
 *    many records all other tenants created meanwhile;
 *  - a view or materialized view registered as an entity: row-level security does not reach
 *    through it (unless it is a security_invoker view), so only the rewrite scopes it;
 *  - tenant columns of differing types: one tenant id must read as each of them;
 *  - functions outside pg_catalog that db.query's reader role may execute (see readerFunctions), or that PostgreSQL's
 *    json functions run for it whatever it may execute (see jsonCasts).
 */
export async function auditDataModel(
  db: SqlRunner,
  entities: readonly AuditedEntity[],
  options: DataAuditOptions = {},
): Promise<DataAudit> {
  const findings: DataFinding[] = [];
  if (options.readerRole !== undefined)
    findings.push(...(await readerFunctions(db, options.readerRole)), ...(await jsonCasts(db, options.readerRole)));
  const tenantTypes = new Map<string, string>();
  for (const e of entities) {
    const schema = e.schema ?? 'public';
    const label = `${schema}.${e.table}`;
    const [rel] = await queryRows<Relation>(
      db,
      `SELECT c.oid::int AS oid, c.relkind::text AS relkind, c.reloptions AS options
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [schema, e.table],
    );
    if (!rel) {
      findings.push({
        code: 'missing_table',
        table: label,
        detail: `entity ${e.name} names ${label}, which does not exist`,
        fix: 'create the table, or fix the entity',
      });
      continue;
    }
    if (!e.tenantColumn) continue; // shared, or unknown (refused for a tenant anyway)
    const columns = await queryRows<Column>(
      db,
      `SELECT a.attnum::int AS attnum, a.attname::text AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attidentity::text AS identity,
              pg_get_expr(d.adbin, d.adrelid) AS default,
              (SELECT co.collname::text FROM pg_collation co WHERE co.oid = a.attcollation AND NOT co.collisdeterministic) AS nondeterministic
         FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [rel.oid],
    );
    const byName = new Map(columns.map((c) => [c.name, c]));
    const tenant = byName.get(e.tenantColumn);
    if (!tenant) {
      findings.push({
        code: 'missing_tenant_column',
        table: label,
        detail: `${label} has no column ${e.tenantColumn} (the tenant column of entity ${e.name})`,
        fix: 'fix tenantColumn in the entity',
      });
      continue;
    }
    const tenantType = tenant.nondeterministic ? `${tenant.type} (nondeterministic collation "${tenant.nondeterministic}")` : tenant.type;
    tenantTypes.set(label, tenantType);
    if (!isTenantTypeSupported(tenantType))
      findings.push({
        code: 'tenant_type_unsupported',
        table: label,
        detail: `the tenant column ${e.tenantColumn} of ${label} is ${tenantType}, which reads several spellings as one tenant: no tenant id is accepted for it`,
        fix: `make ${e.tenantColumn} text, varchar, an integer type or uuid (with a deterministic collation)`,
      });

    if (rel.relkind === 'v' || rel.relkind === 'm') {
      const invoker = rel.relkind === 'v' && (rel.options ?? []).some((o) => /^security_invoker=(true|on|1)$/i.test(o));
      if (!invoker)
        findings.push({
          code: 'view',
          table: label,
          detail: `${label} is a ${rel.relkind === 'm' ? 'materialized view' : 'view'} over tenant data: row-level security does not reach through it, so db.query's fence cannot hold there (only the rewrite scopes it)`,
          fix:
            rel.relkind === 'm'
              ? 'register the tables it reads instead'
              : `ALTER VIEW ${label} SET (security_invoker = true), or register the tables it reads`,
        });
      continue; // indexes and sequences belong to the tables it reads
    }

    const indexes = await queryRows<Index>(
      db,
      'SELECT c.relname::text AS name, i.indisunique AS unique, i.indkey::int2[] AS keys, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1',
      [rel.oid],
    );
    if (!indexes.some((i) => Number(i.keys[0]) === tenant.attnum))
      findings.push({
        code: 'no_tenant_index',
        table: label,
        detail: `no index of ${label} leads with ${e.tenantColumn}: every scoped read of it scans the whole table`,
        fix: `CREATE INDEX ON ${label} (${e.tenantColumn})`,
      });

    const writable = new Set(e.writable ?? []);
    if (!writable.size) continue;
    for (const i of indexes.filter((x) => x.unique)) {
      const keys = i.keys.map(Number);
      const named = keys.filter((k) => k > 0).map((k) => columns.find((c) => c.attnum === k)?.name ?? '');
      const expression = keys.includes(0);
      const touchesWritable = named.some((n) => writable.has(n)) || (expression && [...writable].some((w) => i.def.includes(w)));
      const hasTenant = named.includes(e.tenantColumn) || (expression && i.def.includes(e.tenantColumn));
      if (touchesWritable && !hasTenant)
        findings.push({
          code: 'unique_without_tenant',
          table: label,
          detail: `unique index ${i.name} of ${label} covers writable column(s) ${named.filter((n) => writable.has(n)).join(', ') || '(an expression)'} without ${e.tenantColumn}: entity.create of a value another tenant holds is refused, which tells that it exists`,
          fix: `make it unique per tenant: UNIQUE (${e.tenantColumn}, ${named.join(', ') || '...'})`,
        });
    }
    for (const c of columns) {
      const fromSequence = c.identity !== '' || /^nextval\(/i.test(c.default ?? '');
      if (fromSequence)
        findings.push({
          code: 'shared_sequence',
          table: label,
          detail: `${label}.${c.name} takes its values from one sequence for all tenants: the value of a new record tells how many records other tenants created`,
          fix: `use a UUID (DEFAULT gen_random_uuid()) or a per-tenant counter for ${c.name}`,
        });
    }
  }
  const types = new Set(tenantTypes.values());
  if (types.size > 1)
    findings.push({
      code: 'tenant_type_mismatch',
      table: [...tenantTypes.keys()].join(', '),
      detail: `tenant columns have differing types (${[...tenantTypes].map(([t, ty]) => `${t}: ${ty}`).join(', ')}): one tenant id must read as each of them, and a tenant id that is not a valid value of one type fails there`,
      fix: 'give every tenant column the same type',
    });
  return { tables: entities.length, findings, tenantTypes: [...types].sort() };
}

/**
 * Functions outside pg_catalog (and the fence's own `zmodu_fence.tenant()`) that db.query's reader
 * role may execute, one finding per schema and owner. A statement that got past the rewrite could
 * call them by their qualified name, and a SECURITY DEFINER one runs with its owner's rights
 * (another tenant's rows, say). The fence's install revokes EXECUTE from PUBLIC on the functions
 * its installer owns; the others (an extension's, a function another role created later) need
 * their owner, or a superuser. information_schema's functions are PostgreSQL's own (its views
 * need them for every role) and are not reported.
 */
async function readerFunctions(db: SqlRunner, role: string): Promise<DataFinding[]> {
  const [{ exists }] = await queryRows<{ exists: boolean }>(
    db,
    'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1) AS exists',
    [role],
  );
  if (!exists) return [];
  const rows = await queryRows<{ schema: string; owner: string; signatures: string[]; definers: number; extensions: string[] }>(
    db,
    `SELECT n.nspname::text AS schema, pg_catalog.pg_get_userbyid(p.proowner)::text AS owner,
            pg_catalog.array_agg(${FUNCTION_SIGNATURE} ORDER BY p.proname, p.oid) AS signatures,
            pg_catalog.count(*) FILTER (WHERE p.prosecdef)::int AS definers,
            pg_catalog.array_remove(pg_catalog.array_agg(DISTINCT e.extname::pg_catalog.text), NULL) AS extensions
       FROM pg_catalog.pg_proc p
       JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
       LEFT JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid AND d.deptype = 'e'
       LEFT JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND NOT (n.nspname = 'zmodu_fence' AND p.proname = 'tenant' AND p.pronargs = 0)
        AND pg_catalog.has_function_privilege($1, p.oid, 'EXECUTE')
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [role],
  );
  return rows.map((r) => {
    const names = someOf(r.signatures);
    const of = r.extensions.length ? ` (of extension ${r.extensions.join(', ')})` : '';
    return {
      code: 'reader_function' as const,
      table: r.schema,
      detail:
        `db.query's reader role ${role} may execute ${r.signatures.length} function(s) of schema ${r.schema} owned by ${r.owner}${of}: ${names}` +
        `${r.definers ? `, ${r.definers} of them SECURITY DEFINER (they run with ${r.owner}'s rights)` : ''}; ` +
        'a statement that got past the rewrite could call them by their qualified name',
      fix:
        `as ${r.owner} or a superuser: REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA ${r.schema} FROM PUBLIC, then GRANT EXECUTE on those the ` +
        `application needs TO the application role (install-fence does this for the functions its installer owns, and for ` +
        `functions it creates later: ALTER DEFAULT PRIVILEGES)`,
    };
  });
}

/**
 * Casts to json or jsonb from a type of the database's own (an enum, a domain, an extension's type) through a function
 * outside pg_catalog. Before PostgreSQL 18, to_json, to_jsonb and every json function that takes a value of such a type
 * call that function without checking EXECUTE, so the install's revocation does not reach it: the reader role runs it,
 * a SECURITY DEFINER one with its owner's rights. PostgreSQL 18 checks EXECUTE there (tried: 42501 from to_json,
 * to_jsonb, json_build_object, row_to_json, json_agg and a cast): a cast is a finding there only while the reader role
 * may execute its function. db.query reads every such column as its text, so only a statement that got past the
 * rewrite could call it.
 */
async function jsonCasts(db: SqlRunner, role: string): Promise<DataFinding[]> {
  const [{ version }] = await queryRows<{ version: number }>(
    db,
    "SELECT pg_catalog.current_setting('server_version_num')::pg_catalog.int4 AS version",
  );
  const checksExecute = Number(version) >= 180000;
  const rows = await queryRows<{
    source: string;
    target: string;
    signature: string;
    owner: string;
    definer: boolean;
    extension: string | null;
  }>(
    db,
    `SELECT pg_catalog.format('%I.%I', tn.nspname, t.typname) AS source, pg_catalog.format_type(c.casttarget, NULL) AS target,
            ${FUNCTION_SIGNATURE} AS signature, pg_catalog.pg_get_userbyid(p.proowner)::pg_catalog.text AS owner,
            p.prosecdef AS definer,
            (SELECT e.extname::pg_catalog.text FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
              WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid OPERATOR(pg_catalog.=) p.oid
                AND d.deptype OPERATOR(pg_catalog.=) 'e' LIMIT 1) AS extension
       FROM pg_catalog.pg_cast c
       JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) c.castsource
       JOIN pg_catalog.pg_namespace tn ON tn.oid OPERATOR(pg_catalog.=) t.typnamespace
       JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) c.castfunc
       JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
      WHERE c.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.json'::pg_catalog.regtype, 'pg_catalog.jsonb'::pg_catalog.regtype]::pg_catalog.oid[])
        AND c.castsource OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid AND n.nspname OPERATOR(pg_catalog.<>) 'pg_catalog'
        AND (NOT $2 OR pg_catalog.has_function_privilege($1, p.oid, 'EXECUTE'))
      ORDER BY 1, 2`,
    [role, checksExecute],
  );
  return rows.map((r) => ({
    code: 'json_cast' as const,
    table: r.source,
    detail:
      `the cast from ${r.source} to ${r.target} runs ${r.signature}, owned by ${r.owner}${r.extension ? ` (of extension ${r.extension})` : ''}` +
      `${r.definer ? ", SECURITY DEFINER (it runs with its owner's rights)" : ''}: ` +
      (checksExecute
        ? `db.query's reader role ${role} may EXECUTE it, so to_json and the json functions run it for that role on any ${r.source} value`
        : `to_json and the json functions call it without checking EXECUTE (before PostgreSQL 18), so db.query's reader role ${role} runs it on any ${r.source} value`) +
      ` (db.query reads columns of ${r.source} as their text; a statement that got past the rewrite would not)`,
    fix: r.extension
      ? `nothing to do if extension ${r.extension} is trusted; else drop the extension from this database`
      : `DROP CAST (${r.source} AS ${r.target}), or make ${r.signature} SECURITY INVOKER and let it read nothing but its argument`,
  }));
}
