import { createHash, randomBytes } from 'node:crypto';
import { queryRows } from '@zmodu/core';
import { quoteName } from '../sql/sql-printer';
import { DataMessages } from '../data.messages';
import { TenantFenceError } from '../exceptions/tenant-fence.exception';

/**
 * The second fence of db.query, in the database itself: the statement runs as a reader role
 * (`SET LOCAL ROLE`) that may only SELECT the registered tables and columns, and row-level
 * security policies on the tenant tables admit only the rows of the caller's tenant. So an
 * attack has to beat both the rewrite and the database.
 *
 * The tenant reaches the policies as a transaction setting, which any role can change with
 * set_config(): so the setting is checked. Beside it goes a MAC of the tenant and the backend's
 * pid under a key that only the installer and the application can read; the policies call
 * `zmodu_fence.tenant()` (SECURITY DEFINER), which returns the tenant only when the MAC is
 * right. A statement that sets another tenant finds no row at all.
 */

/** Anything with TypeORM's `query(sql, params)`: a DataSource, a QueryRunner, an EntityManager. */
export interface SqlRunner {
  query(sql: string, params?: unknown[]): Promise<unknown>;
  /** A DataSource or an EntityManager has it: the install then runs in a transaction of its own (or a savepoint). */
  transaction?<T>(run: (manager: SqlRunner) => Promise<T>): Promise<T>;
}

/** All or nothing: in a transaction when the runner can open one (a QueryRunner's caller owns its transaction). */
function atomically<T>(db: SqlRunner, run: (db: SqlRunner) => Promise<T>): Promise<T> {
  return typeof db.transaction === 'function' ? db.transaction((m) => run(m)) : run(db);
}

export interface FenceTable {
  readonly table: string;
  readonly schema?: string;
  /** The tenant column; null: a table shared by all tenants (granted, no policy). */
  readonly tenantColumn: string | null;
  /** Columns the reader may see (the tenant column is added); omitted: all. */
  readonly columns?: readonly string[];
}

/**
 * The fence tables of data-skill entities: every entity whose tenant column is known (its own,
 * or `dbQueryTenantColumn`); `tenantColumn: null` marks a shared table. Entities with no known
 * tenant column are left out: db.query refuses them for a tenant anyway.
 */
export function fenceTablesFor(options: {
  readonly entities: ReadonlyArray<{ table: string; schema?: string; tenantColumn?: string | null; columns?: readonly string[] }>;
  readonly dbQueryTenantColumn?: string;
}): FenceTable[] {
  const out: FenceTable[] = [];
  for (const e of options.entities) {
    const tenantColumn = e.tenantColumn === null ? null : (e.tenantColumn ?? options.dbQueryTenantColumn);
    if (tenantColumn !== undefined) out.push({ table: e.table, schema: e.schema, tenantColumn, columns: e.columns });
  }
  return out;
}

export interface TenantFenceOptions {
  /** The reader role db.query runs as. Default `zmodu_reader`. */
  readonly role?: string;
  /** The role the application connects as, made a member of the reader role. Default: the current user. */
  readonly appRole?: string;
}

export interface FenceAction {
  /** `created`, `changed`, `kept` or `note`. */
  readonly kind: 'created' | 'changed' | 'kept' | 'note';
  readonly what: string;
}

export interface FenceStatus {
  readonly installed: boolean;
  readonly role: string;
  /** What is missing or wrong, each with what to do. */
  readonly problems: string[];
  /** What weakens the fence without undoing it, each with what to do. */
  readonly warnings: string[];
}

export const DEFAULT_FENCE_ROLE = 'zmodu_reader';
export const FENCE_SCHEMA = 'zmodu_fence';
export const FENCE_TENANT_SETTING = 'zmodu.tenant_id';
export const FENCE_MAC_SETTING = 'zmodu.tenant_mac';
const SET_CONFIG = 'pg_catalog.set_config(text, text, boolean)';
/** 2: policies made under a pinned search_path, functions outside pg_catalog and session-state functions revoked from PUBLIC. */
const FENCE_VERSION = 2;
/** What every unqualified name of the install means: PostgreSQL's own (see pinSearchPath). */
const INSTALL_SEARCH_PATH = 'pg_catalog, pg_temp';
/**
 * Functions of pg_catalog the reader must not execute, beside set_config: advisory locks (a session-level one survives
 * the rollback and stays with a pooled connection; a transaction-level one holds other sessions for as long as the
 * statement runs) and setseed (the session's random seed outlives the transaction). Their owner is a superuser.
 */
const SESSION_STATE_FUNCTIONS = [
  ...[
    'pg_advisory_lock',
    'pg_advisory_lock_shared',
    'pg_try_advisory_lock',
    'pg_try_advisory_lock_shared',
    'pg_advisory_xact_lock',
    'pg_advisory_xact_lock_shared',
    'pg_try_advisory_xact_lock',
    'pg_try_advisory_xact_lock_shared',
    'pg_advisory_unlock',
    'pg_advisory_unlock_shared',
  ].flatMap((f) => [`pg_catalog.${f}(bigint)`, `pg_catalog.${f}(integer, integer)`]),
  'pg_catalog.pg_advisory_unlock_all()',
  'pg_catalog.setseed(double precision)',
];
/** A function as people read it: schema-qualified whatever the search_path, with its argument types. */
export const FUNCTION_SIGNATURE =
  "pg_catalog.format('%I.%I(%s)', n.nspname, p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid))";
/** Functions outside pg_catalog that the reader may execute: none but the fence's own, and information_schema's (its views need them). */
const FOREIGN_FUNCTIONS = `FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND NOT (n.nspname = '${FENCE_SCHEMA}' AND p.proname = 'tenant' AND p.pronargs = 0)
    AND pg_catalog.has_function_privilege($1, p.oid, 'EXECUTE')`;
const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

/** A list as a message names it: the first eight, and how many more. */
export function someOf(items: readonly string[], shown = 8): string {
  const more = items.length - shown;
  return `${items.slice(0, shown).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

const q = quoteName;
const lit = (value: string) => `'${value.replace(/'/g, "''")}'`;
const tableName = (t: FenceTable) => `${q(t.schema ?? 'public')}.${q(t.table)}`;

function roleOf(options: TenantFenceOptions): string {
  const role = options.role ?? DEFAULT_FENCE_ROLE;
  if (!IDENT.test(role)) throw new TenantFenceError(DataMessages.fenceRoleInvalid(role));
  return role;
}

/** The MAC that `zmodu_fence.tenant()` checks: sha256(key || sha256(key ':' pid ':' tenant)), hex. */
export function fenceMac(key: string, processId: number, tenantId: string): string {
  const inner = createHash('sha256').update(`${key}:${processId}:${tenantId}`, 'utf8').digest();
  return createHash('sha256').update(Buffer.from(key, 'utf8')).update(inner).digest('hex');
}

/** The transaction settings a fenced statement runs with, for a connection's backend pid. */
export function fenceSettings(key: string, processId: number, tenantId: string): Record<string, string> {
  return { [FENCE_TENANT_SETTING]: tenantId, [FENCE_MAC_SETTING]: fenceMac(key, processId, tenantId) };
}

/**
 * The checking function. PL/pgSQL, so that its plan is cached for the session (a SQL function
 * with SET clauses is not inlined, and its body would be planned for every statement). Every
 * name in it is schema-qualified (functions, operators, types), so that no search_path a caller
 * sets can change what it calls, without the cost of a SET search_path on every call.
 */
function functionSql(): string {
  return `CREATE OR REPLACE FUNCTION ${FENCE_SCHEMA}.tenant() RETURNS pg_catalog.text
  LANGUAGE plpgsql STABLE SECURITY DEFINER
AS $zmodu_fence$
DECLARE
  t pg_catalog.text := pg_catalog.current_setting(${lit(FENCE_TENANT_SETTING)}, true);
  m pg_catalog.text := pg_catalog.current_setting(${lit(FENCE_MAC_SETTING)}, true);
  k pg_catalog.text;
BEGIN
  IF t IS NULL OR m IS NULL THEN RETURN NULL; END IF;
  SELECT s.key INTO k FROM ${FENCE_SCHEMA}.secret s WHERE s.id OPERATOR(pg_catalog.=) 1;
  IF m OPERATOR(pg_catalog.=) pg_catalog.encode(pg_catalog.sha256(
       pg_catalog.convert_to(k, 'UTF8') OPERATOR(pg_catalog.||) pg_catalog.sha256(pg_catalog.convert_to(
         k OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) pg_catalog.pg_backend_pid()::pg_catalog.text
           OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) t, 'UTF8'))), 'hex') THEN
    RETURN t;
  END IF;
  RETURN NULL;
END
$zmodu_fence$`;
}

/**
 * How the fence sits on a table: `sole` when it turned row-level security on itself (its one
 * permissive policy is the whole rule: other roles pass, the reader needs its tenant), `beside`
 * when the application has row-level security of its own (a restrictive policy, ANDed with the
 * application's, and a permissive one that lets the reader in).
 */
type FenceMode = 'sole' | 'beside';

/** A tenant column's type: as SQL (format_type, under the install's pinned search_path), and by oid and typmod. */
interface ColumnType {
  readonly name: string;
  readonly id: string;
}

/**
 * The policies of one tenant table, with the signature kept in the fence policy's comment (the type by oid, so that
 * the signature does not depend on the search_path of whoever reads it). Created under the install's pinned
 * search_path: no operator or type of another schema can stand in for PostgreSQL's own.
 */
function policies(role: string, column: string, type: ColumnType, mode: FenceMode) {
  // Each test of the role is a scalar subquery, so PostgreSQL evaluates it once per statement
  // (an InitPlan) rather than calling current_user for every row; per row remains `$a OR col = $b`.
  const reader = `(SELECT current_user = ${lit(role)})`;
  const other = `(SELECT current_user <> ${lit(role)})`;
  const rule = `${other} OR ${q(column)} = (SELECT ${FENCE_SCHEMA}.tenant())::${type.name}`;
  return {
    signature: `zmodu fence v${FENCE_VERSION} mode=${mode} role=${role} column=${column} type=${type.id}`,
    fence:
      mode === 'sole'
        ? `AS PERMISSIVE FOR ALL TO PUBLIC USING (${rule}) WITH CHECK (${rule})`
        : `AS RESTRICTIVE FOR ALL TO PUBLIC USING (${rule})`,
    access: `AS PERMISSIVE FOR SELECT TO PUBLIC USING (${reader})`,
  };
}

interface TableRecord {
  mode: FenceMode;
  /** The fence turned the table's row-level security on (it was off). */
  enabled_rls: boolean;
}

/** How the fence was installed on a table (undefined: never installed there). */
async function recorded(db: SqlRunner, relid: number): Promise<TableRecord | undefined> {
  const [{ present }] = await queryRows<{ present: boolean }>(db, 'SELECT to_regclass($1) IS NOT NULL AS present', [
    `${FENCE_SCHEMA}.tables`,
  ]);
  if (!present) return undefined;
  const [row] = await queryRows<TableRecord>(db, `SELECT mode, enabled_rls FROM ${FENCE_SCHEMA}.tables WHERE relid = $1`, [relid]);
  return row;
}

/** Policies on a table that are not the fence's: the application's own. */
async function foreignPolicies(db: SqlRunner, relid: number): Promise<Array<{ name: string; permissive: boolean }>> {
  return queryRows(
    db,
    "SELECT polname::text AS name, polpermissive AS permissive FROM pg_policy WHERE polrelid = $1 AND polname NOT IN ('zmodu_fence', 'zmodu_reader_access')",
    [relid],
  );
}

function modeOf(comment: string | null | undefined): FenceMode | undefined {
  const m = /\bmode=(sole|beside)\b/.exec(comment ?? '');
  return m ? (m[1] as FenceMode) : undefined;
}

interface TableInfo {
  oid: number;
  relkind: string;
  rls: boolean;
}

async function tableInfo(db: SqlRunner, t: FenceTable): Promise<TableInfo | undefined> {
  const [info] = await queryRows<TableInfo>(
    db,
    `SELECT c.oid::int AS oid, c.relkind::text AS relkind, c.relrowsecurity AS rls
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [t.schema ?? 'public', t.table],
  );
  return info;
}

async function columnType(db: SqlRunner, oid: number, column: string): Promise<ColumnType | undefined> {
  const [row] = await queryRows<ColumnType>(
    db,
    `SELECT pg_catalog.format_type(atttypid, atttypmod) AS name, atttypid::pg_catalog.text OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) atttypmod::pg_catalog.text AS id
       FROM pg_catalog.pg_attribute WHERE attrelid = $1 AND attname = $2 AND attnum > 0 AND NOT attisdropped`,
    [oid, column],
  );
  return row;
}

async function policyComment(db: SqlRunner, oid: number, name: string): Promise<string | null | undefined> {
  const [row] = await queryRows<{ comment: string | null }>(
    db,
    "SELECT obj_description(p.oid, 'pg_policy') AS comment FROM pg_policy p WHERE p.polrelid = $1 AND p.polname = $2",
    [oid, name],
  );
  return row ? row.comment : undefined;
}

/**
 * Create the reader role, its grants, the key, the checking function and the policies, or bring
 * them up to date; idempotent and all or nothing (given a DataSource or an EntityManager it opens a
 * transaction; given a QueryRunner, the caller's transaction holds it, as in a migration).
 * Needs: CREATEROLE (or superuser) for the role and the membership, CREATE on the database for
 * the `zmodu_fence` schema, and ownership of the registered tables for the grants and policies.
 */
export function installTenantFence(db: SqlRunner, tables: readonly FenceTable[], options: TenantFenceOptions = {}): Promise<FenceAction[]> {
  return atomically(db, (tx) => pinSearchPath(tx, () => install(tx, tables, options)));
}

/**
 * Run the install with search_path set to pg_catalog (SET, which needs no privilege, unlike set_config), and give the
 * session its own back after: the policies it creates are stored as parsed trees, so an operator or a type of another
 * schema on the installer's search_path (an application's `=` on name, say) would be in them for good.
 */
async function pinSearchPath<T>(db: SqlRunner, run: () => Promise<T>): Promise<T> {
  const [{ path }] = await queryRows<{ path: string }>(db, "SELECT pg_catalog.current_setting('search_path') AS path");
  await db.query(`SET search_path TO ${INSTALL_SEARCH_PATH}`);
  try {
    return await run();
  } finally {
    // After an error the transaction is aborted (this fails, and the rollback restores the setting).
    await db.query(`SET search_path TO ${path.trim() === '' ? "''" : path}`).catch(() => undefined);
  }
}

async function install(db: SqlRunner, tables: readonly FenceTable[], options: TenantFenceOptions): Promise<FenceAction[]> {
  const role = roleOf(options);
  const actions: FenceAction[] = [];
  const say = (kind: FenceAction['kind'], what: string) => actions.push({ kind, what });

  // The role: no login, no inheritance, never a superuser or BYPASSRLS, a member of nothing.
  const [existing] = await queryRows<{ rolsuper: boolean; rolbypassrls: boolean; memberships: number }>(
    db,
    'SELECT r.rolsuper, r.rolbypassrls, (SELECT count(*)::int FROM pg_auth_members m WHERE m.member = r.oid) AS memberships FROM pg_roles r WHERE r.rolname = $1',
    [role],
  );
  if (!existing) {
    // Roles are cluster-wide: another installer may create it at the same moment.
    await db.query(
      `DO $zmodu$ BEGIN CREATE ROLE ${q(role)} NOLOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS; ` +
        'EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $zmodu$',
    );
    say('created', `role ${role} (NOLOGIN, NOINHERIT)`);
  } else {
    if (existing.rolsuper || existing.rolbypassrls) throw new TenantFenceError(DataMessages.fenceRoleBypassesRls(role));
    if (existing.memberships > 0) throw new TenantFenceError(DataMessages.fenceRoleIsMember(role));
    say('kept', `role ${role}`);
  }

  const [{ me }] = await queryRows<{ me: string }>(db, 'SELECT current_user::text AS me');
  const app = options.appRole ?? me;
  if (app === role) throw new TenantFenceError(DataMessages.fenceRoleIsAppRole());
  const [{ member }] = await queryRows<{ member: boolean }>(db, "SELECT pg_has_role($1, $2, 'MEMBER') AS member", [app, role]);
  if (!member) {
    await db.query(`DO $zmodu$ BEGIN GRANT ${q(role)} TO ${q(app)}; EXCEPTION WHEN unique_violation THEN NULL; END $zmodu$`);
    say('created', `membership of ${app} in ${role} (so that it may SET ROLE ${role})`);
  } else say('kept', `membership of ${app} in ${role}`);

  // The key, readable by the installer and the application only, and the function that checks the MAC.
  const [{ present }] = await queryRows<{ present: boolean }>(db, 'SELECT to_regnamespace($1) IS NOT NULL AS present', [FENCE_SCHEMA]);
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${FENCE_SCHEMA}`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${FENCE_SCHEMA}.secret (id int PRIMARY KEY CHECK (id = 1), key text NOT NULL)`);
  await db.query(`REVOKE ALL ON ${FENCE_SCHEMA}.secret FROM PUBLIC`);
  // How the fence sits on each table, so that a repair never mistakes its own row-level security for the application's.
  await db.query(
    `CREATE TABLE IF NOT EXISTS ${FENCE_SCHEMA}.tables (relid oid PRIMARY KEY, mode text NOT NULL CHECK (mode IN ('sole', 'beside')), enabled_rls boolean NOT NULL DEFAULT false)`,
  );
  await db.query(`REVOKE ALL ON ${FENCE_SCHEMA}.tables FROM PUBLIC`);
  await db.query(`GRANT USAGE ON SCHEMA ${FENCE_SCHEMA} TO PUBLIC`);
  if (app !== me) await db.query(`GRANT SELECT ON ${FENCE_SCHEMA}.secret TO ${q(app)}`);
  say(present ? 'kept' : 'created', `schema ${FENCE_SCHEMA} with its key table (no access for PUBLIC or ${role})`);
  const inserted = await queryRows<{ id: number }>(
    db,
    `INSERT INTO ${FENCE_SCHEMA}.secret (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING RETURNING id`,
    [randomBytes(32).toString('hex')],
  );
  say(inserted.length ? 'created' : 'kept', 'the fence key');
  await db.query(functionSql());
  await db.query(`GRANT EXECUTE ON FUNCTION ${FENCE_SCHEMA}.tenant() TO PUBLIC`);
  say('changed', `function ${FENCE_SCHEMA}.tenant() (SECURITY DEFINER: the tenant only with a valid MAC)`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${FENCE_SCHEMA}.state (name text PRIMARY KEY, value text NOT NULL)`);
  await db.query(`REVOKE ALL ON ${FENCE_SCHEMA}.state FROM PUBLIC`);
  // The functions whose EXECUTE the install took from PUBLIC, so that an uninstall gives it back.
  await db.query(`CREATE TABLE IF NOT EXISTS ${FENCE_SCHEMA}.revoked (fn oid PRIMARY KEY)`);
  await db.query(`REVOKE ALL ON ${FENCE_SCHEMA}.revoked FROM PUBLIC`);
  await lockSetConfig(db, role, app, say);
  await lockSessionState(db, role, app, say);
  await lockForeignFunctions(db, role, me, app, say);

  // Grants from scratch: nothing but the registered tables and columns.
  const schemas = [...new Set(tables.map((t) => t.schema ?? 'public'))];
  for (const s of schemas) {
    await db.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${q(s)} FROM ${q(role)}`);
    await db.query(`GRANT USAGE ON SCHEMA ${q(s)} TO ${q(role)}`);
  }
  for (const t of tables) {
    const info = await tableInfo(db, t);
    if (!info) throw new TenantFenceError(DataMessages.fenceTableMissing(tableName(t)));
    const cols = t.columns?.length ? [...new Set([...t.columns, ...(t.tenantColumn ? [t.tenantColumn] : [])])] : undefined;
    await db.query(`GRANT SELECT ${cols ? `(${cols.map(q).join(', ')}) ` : ''}ON ${tableName(t)} TO ${q(role)}`);
    say('changed', `${role} may SELECT ${cols ? `(${cols.join(', ')})` : 'every column'} of ${tableName(t)}`);
    if (!t.tenantColumn) continue;
    if (info.relkind !== 'r' && info.relkind !== 'p') {
      say(
        'note',
        `${tableName(t)} is not a table (relkind ${info.relkind}): row-level security cannot apply to it; only the rewrite scopes it (audit-data flags it)`,
      );
      continue;
    }
    const type = await columnType(db, info.oid, t.tenantColumn);
    if (!type) throw new TenantFenceError(DataMessages.fenceTenantColumnMissing(tableName(t), String(t.tenantColumn)));
    const current = await policyComment(db, info.oid, 'zmodu_fence');
    const before = await recorded(db, info.oid);
    const enabled = before?.enabled_rls ?? !info.rls;
    // Alone on a table whose row-level security it turned on; beside the application's own policies
    // as soon as there are any (a permissive policy of the fence's would OR them away).
    const foreign = await foreignPolicies(db, info.oid);
    const mode: FenceMode = enabled && !foreign.length ? 'sole' : 'beside';
    if (before?.mode === 'sole' && mode === 'beside')
      say(
        'note',
        `${tableName(t)} has policies of the application now (${foreign.map((f) => f.name).join(', ')}): the fence sits beside them`,
      );
    const p = policies(role, t.tenantColumn, type, mode);
    await db.query(
      `INSERT INTO ${FENCE_SCHEMA}.tables (relid, mode, enabled_rls) VALUES ($1, $2, $3) ON CONFLICT (relid) DO UPDATE SET mode = EXCLUDED.mode, enabled_rls = EXCLUDED.enabled_rls`,
      [info.oid, mode, enabled],
    );
    if (!info.rls) {
      await db.query(`ALTER TABLE ${tableName(t)} ENABLE ROW LEVEL SECURITY`);
      say('created', `row-level security on ${tableName(t)}`);
    }
    const hasAccess = (await policyComment(db, info.oid, 'zmodu_reader_access')) !== undefined;
    if (current === p.signature && hasAccess === (mode === 'beside')) {
      say('kept', `policies of ${tableName(t)} (${t.tenantColumn} ${type.name})`);
      continue;
    }
    await db.query(`DROP POLICY IF EXISTS zmodu_reader_access ON ${tableName(t)}`);
    await db.query(`DROP POLICY IF EXISTS zmodu_fence ON ${tableName(t)}`);
    await db.query(`CREATE POLICY zmodu_fence ON ${tableName(t)} ${p.fence}`);
    if (mode === 'beside') await db.query(`CREATE POLICY zmodu_reader_access ON ${tableName(t)} ${p.access}`);
    await db.query(`COMMENT ON POLICY zmodu_fence ON ${tableName(t)} IS ${lit(p.signature)}`);
    say(
      'changed',
      `policies of ${tableName(t)}: ${role} reads only rows whose ${t.tenantColumn} (${type.name}) is the checked tenant; ` +
        (mode === 'sole' ? 'other roles read and write as before' : "beside the table's own policies, which other roles keep"),
    );
  }
  return actions;
}

/**
 * set_config('role', 'none') takes any statement back from the reader role to the session's own
 * role (RESET ROLE needs no privilege), and with it past row-level security: a statement that got
 * past the rewrite could do that. So the reader must not execute set_config: revoke it from PUBLIC
 * (only the function's owner, a superuser, may) and grant it to the application role, which sets
 * the fence's settings with it. Other roles of the database that call set_config need it granted.
 */
async function lockSetConfig(
  db: SqlRunner,
  role: string,
  app: string,
  say: (kind: FenceAction['kind'], what: string) => void,
): Promise<void> {
  const [{ can }] = await queryRows<{ can: boolean }>(db, `SELECT has_function_privilege($1, '${SET_CONFIG}', 'EXECUTE') AS can`, [role]);
  if (!can) return say('kept', `${role} may not execute set_config (it cannot leave its role)`);
  const [{ superuser }] = await queryRows<{ superuser: boolean }>(
    db,
    'SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user',
  );
  if (!superuser)
    return say(
      'note',
      `${role} may still execute set_config, so a statement that got past the rewrite could leave the role; only a superuser can change that: ` +
        `REVOKE EXECUTE ON FUNCTION ${SET_CONFIG} FROM PUBLIC; GRANT EXECUTE ON FUNCTION ${SET_CONFIG} TO ${q(app)};`,
    );
  await db.query(`REVOKE EXECUTE ON FUNCTION ${SET_CONFIG} FROM PUBLIC`);
  await db.query(`GRANT EXECUTE ON FUNCTION ${SET_CONFIG} TO ${q(app)}`);
  await db.query(`INSERT INTO ${FENCE_SCHEMA}.state (name, value) VALUES ('set_config_revoked', 'true') ON CONFLICT (name) DO NOTHING`);
  say(
    'changed',
    `revoked EXECUTE on set_config from PUBLIC (granted to ${app}): ${role} cannot leave its role; other roles that call set_config need it granted`,
  );
}

/** Whether the current role is a superuser (the owner of pg_catalog's functions, and of everything else for GRANT). */
async function isSuperuser(db: SqlRunner): Promise<boolean> {
  const [{ superuser }] = await queryRows<{ superuser: boolean }>(
    db,
    'SELECT rolsuper AS superuser FROM pg_catalog.pg_roles WHERE rolname = current_user',
  );
  return superuser;
}

/** EXECUTE on these functions taken from PUBLIC (and the reader), kept for the application role, and recorded for uninstall. */
async function revokeFromPublic(db: SqlRunner, role: string, app: string, oids: readonly number[]): Promise<void> {
  for (let i = 0; i < oids.length; i += 200) {
    const chunk = oids.slice(i, i + 200);
    const rows = await queryRows<{ sig: string }>(
      db,
      'SELECT f::pg_catalog.regprocedure::pg_catalog.text AS sig FROM pg_catalog.unnest($1::pg_catalog.oid[]) AS f',
      [chunk],
    );
    const list = rows.map((r) => r.sig).join(', ');
    // Only those PUBLIC could execute: an uninstall gives back what the install took, nothing more.
    await db.query(
      `INSERT INTO ${FENCE_SCHEMA}.revoked (fn) SELECT f FROM pg_catalog.unnest($1::pg_catalog.oid[]) AS f
        WHERE pg_catalog.has_function_privilege('public', f, 'EXECUTE') ON CONFLICT (fn) DO NOTHING`,
      [chunk],
    );
    await db.query(`REVOKE EXECUTE ON ROUTINE ${list} FROM PUBLIC, ${q(role)}`);
    await db.query(`GRANT EXECUTE ON ROUTINE ${list} TO ${q(app)}`);
  }
}

/**
 * Advisory locks and setseed (SESSION_STATE_FUNCTIONS): their owner is a superuser, so only a superuser can take them
 * from PUBLIC; anyone else gets a note with the statements. Until then, db.query releases the session-level advisory
 * locks of its connection after each statement (pg_advisory_unlock_all), but a transaction-level one still holds other
 * sessions for as long as the statement runs.
 */
async function lockSessionState(
  db: SqlRunner,
  role: string,
  app: string,
  say: (kind: FenceAction['kind'], what: string) => void,
): Promise<void> {
  const open = await openSessionState(db, role);
  if (!open.length)
    return say('kept', `${role} may not take advisory locks or set the random seed (no session state outlives its statement)`);
  if (!(await isSuperuser(db)))
    return say(
      'note',
      `${role} may still take advisory locks and set the random seed (db.query releases session-level locks after each statement, ` +
        `but a transaction-level one holds other sessions while the statement runs); only a superuser can change that: ` +
        `REVOKE EXECUTE ON FUNCTION ${open.map((f) => f.sig).join(', ')} FROM PUBLIC; GRANT EXECUTE ON FUNCTION ${open.map((f) => f.sig).join(', ')} TO ${q(app)};`,
    );
  const oids = open.map((f) => f.oid);
  await revokeFromPublic(db, role, app, oids);
  say(
    'changed',
    `revoked EXECUTE on ${open.length} advisory-lock and random-seed functions from PUBLIC (granted to ${app}): ${role} leaves no lock or seed behind; other roles that take advisory locks need them granted`,
  );
}

async function openSessionState(db: SqlRunner, role: string): Promise<Array<{ oid: number; sig: string }>> {
  return queryRows(
    db,
    `SELECT f::pg_catalog.regprocedure::pg_catalog.oid::int AS oid, f AS sig FROM pg_catalog.unnest($2::pg_catalog.text[]) AS f
      WHERE pg_catalog.has_function_privilege($1, f, 'EXECUTE')`,
    [role, SESSION_STATE_FUNCTIONS],
  );
}

/**
 * Functions outside pg_catalog (an application's `public.round(double precision, integer)` SECURITY DEFINER helper, an
 * extension's): PostgreSQL grants EXECUTE on every new function to PUBLIC, so the reader could call any of them by its
 * qualified name (db.query runs with search_path pinned to pg_catalog, so no unqualified name reaches them). The install
 * takes EXECUTE from PUBLIC on those its role may act for (its own, and all of them for a superuser), keeps it for the
 * application role, and does the same for the functions it and the application role create later (ALTER DEFAULT
 * PRIVILEGES). What it cannot revoke (another owner's, an extension's installed by a superuser) it names in a note; the
 * fence status warns about it and the data audit reports it (`reader_function`).
 */
async function lockForeignFunctions(
  db: SqlRunner,
  role: string,
  me: string,
  app: string,
  say: (kind: FenceAction['kind'], what: string) => void,
): Promise<void> {
  const mine = await queryRows<{ oid: number }>(
    db,
    `SELECT p.oid::int AS oid ${FOREIGN_FUNCTIONS} AND pg_catalog.pg_has_role(current_user, p.proowner, 'USAGE') ORDER BY p.oid`,
    [role],
  );
  if (mine.length) {
    await revokeFromPublic(
      db,
      role,
      app,
      mine.map((r) => r.oid),
    );
    say(
      'changed',
      `revoked EXECUTE from PUBLIC on ${mine.length} function(s) outside pg_catalog (granted to ${app}): ${role} cannot call them; other roles that call them need it granted`,
    );
  } else say('kept', `${role} may execute no function outside pg_catalog that ${me} may revoke`);
  // Functions created later: by the installer, and by the application role when the installer may act for it.
  for (const owner of [...new Set([me, app])]) {
    const [{ may, open }] = await queryRows<{ may: boolean; open: boolean }>(
      db,
      `SELECT pg_catalog.pg_has_role(current_user, $1, 'MEMBER') AS may,
              NOT EXISTS (SELECT 1 FROM pg_catalog.pg_default_acl d
                           WHERE d.defaclrole = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = $1) AND d.defaclnamespace = 0 AND d.defaclobjtype = 'f')
              OR EXISTS (SELECT 1 FROM pg_catalog.pg_default_acl d, pg_catalog.aclexplode(d.defaclacl) a
                          WHERE d.defaclrole = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = $1) AND d.defaclnamespace = 0
                            AND d.defaclobjtype = 'f' AND a.grantee = 0 AND a.privilege_type = 'EXECUTE') AS open`,
      [owner],
    );
    if (!open) {
      say('kept', `functions ${owner} creates are not executable by PUBLIC`);
      continue;
    }
    if (!may) {
      say(
        'note',
        `functions ${owner} creates later are executable by PUBLIC, ${role} included; as ${owner}: ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;`,
      );
      continue;
    }
    await db.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${q(owner)} REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC`);
    if (owner !== app) await db.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${q(owner)} GRANT EXECUTE ON FUNCTIONS TO ${q(app)}`);
    await db.query(`INSERT INTO ${FENCE_SCHEMA}.state (name, value) VALUES ($1, 'true') ON CONFLICT (name) DO NOTHING`, [
      `default_execute_revoked:${owner}`,
    ]);
    say(
      'changed',
      `functions ${owner} creates from now on are not executable by PUBLIC${owner !== app ? ` (${app} may execute them)` : ''}`,
    );
  }
  const left = await queryRows<{ sig: string; owner: string }>(
    db,
    `SELECT ${FUNCTION_SIGNATURE} AS sig, pg_catalog.pg_get_userbyid(p.proowner)::pg_catalog.text AS owner ${FOREIGN_FUNCTIONS} ORDER BY 1`,
    [role],
  );
  if (left.length)
    say(
      'note',
      `${role} may still execute ${left.length} function(s) outside pg_catalog that ${me} may not revoke ` +
        `(${someOf(left.map((f) => `${f.sig} of ${f.owner}`))}): their owner or a superuser revokes EXECUTE from PUBLIC (audit-data lists them)`,
    );
}

/** Remove the policies, the grants and the fence schema (the role stays: other databases may use it). */
export function uninstallTenantFence(
  db: SqlRunner,
  tables: readonly FenceTable[],
  options: TenantFenceOptions = {},
): Promise<FenceAction[]> {
  return atomically(db, (tx) => pinSearchPath(tx, () => uninstall(tx, tables, options)));
}

async function uninstall(db: SqlRunner, tables: readonly FenceTable[], options: TenantFenceOptions): Promise<FenceAction[]> {
  const role = roleOf(options);
  const actions: FenceAction[] = [];
  const say = (kind: FenceAction['kind'], what: string) => actions.push({ kind, what });
  // Every table the fence was ever installed on (its policies depend on the function the schema drop
  // removes), not only those named now: a table left out of the list would keep row-level security
  // with its policy gone.
  const oids = new Set<number>();
  for (const t of tables) {
    const info = await tableInfo(db, t);
    if (info) oids.add(info.oid);
  }
  const [{ present }] = await queryRows<{ present: boolean }>(db, 'SELECT to_regclass($1) IS NOT NULL AS present', [
    `${FENCE_SCHEMA}.tables`,
  ]);
  if (present)
    for (const r of await queryRows<{ relid: number }>(db, `SELECT relid::int AS relid FROM ${FENCE_SCHEMA}.tables`)) oids.add(r.relid);
  for (const oid of oids) {
    const [rel] = await queryRows<{ name: string }>(db, 'SELECT $1::oid::regclass::text AS name FROM pg_class WHERE oid = $1', [oid]);
    if (!rel) continue; // dropped meanwhile
    const record = await recorded(db, oid);
    for (const name of ['zmodu_fence', 'zmodu_reader_access']) await db.query(`DROP POLICY IF EXISTS ${name} ON ${rel.name}`);
    if (record?.enabled_rls) {
      const foreign = await foreignPolicies(db, oid);
      if (!foreign.length)
        await db.query(`ALTER TABLE ${rel.name} DISABLE ROW LEVEL SECURITY`); // it was off before the fence
      else
        say(
          'note',
          `left row-level security on for ${rel.name}: the application's policies (${foreign.map((f) => f.name).join(', ')}) rely on it now`,
        );
    }
    say('changed', `removed the fence of ${rel.name}`);
  }
  const [{ exists }] = await queryRows<{ exists: boolean }>(db, 'SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS exists', [
    role,
  ]);
  if (exists)
    for (const s of new Set(tables.map((t) => t.schema ?? 'public')))
      await db.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${q(s)} FROM ${q(role)}`);
  const [{ state }] = await queryRows<{ state: boolean }>(db, 'SELECT to_regclass($1) IS NOT NULL AS state', [`${FENCE_SCHEMA}.state`]);
  if (state && (await queryRows(db, `SELECT 1 FROM ${FENCE_SCHEMA}.state WHERE name = 'set_config_revoked'`)).length) {
    const [{ superuser }] = await queryRows<{ superuser: boolean }>(
      db,
      'SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user',
    );
    if (superuser) {
      await db.query(`GRANT EXECUTE ON FUNCTION ${SET_CONFIG} TO PUBLIC`);
      say('changed', 'gave EXECUTE on set_config back to PUBLIC');
    } else
      say(
        'note',
        `set_config stays revoked from PUBLIC; a superuser gives it back with: GRANT EXECUTE ON FUNCTION ${SET_CONFIG} TO PUBLIC;`,
      );
  }
  await giveBackExecute(db, say);
  await db.query(`DROP SCHEMA IF EXISTS ${FENCE_SCHEMA} CASCADE`);
  say('changed', `dropped schema ${FENCE_SCHEMA}; role ${role} kept`);
  return actions;
}

/** EXECUTE back to PUBLIC on what the install took from it (recorded in zmodu_fence.revoked and .state), where the uninstaller may. */
async function giveBackExecute(db: SqlRunner, say: (kind: FenceAction['kind'], what: string) => void): Promise<void> {
  const [{ present }] = await queryRows<{ present: boolean }>(db, 'SELECT to_regclass($1) IS NOT NULL AS present', [
    `${FENCE_SCHEMA}.revoked`,
  ]);
  if (!present) return;
  const fns = await queryRows<{ sig: string; may: boolean }>(
    db,
    `SELECT r.fn::pg_catalog.regprocedure::pg_catalog.text AS sig, pg_catalog.pg_has_role(current_user, p.proowner, 'USAGE') AS may
       FROM ${FENCE_SCHEMA}.revoked r JOIN pg_catalog.pg_proc p ON p.oid = r.fn ORDER BY 1`,
  );
  const may = fns.filter((f) => f.may).map((f) => f.sig);
  for (let i = 0; i < may.length; i += 200) await db.query(`GRANT EXECUTE ON ROUTINE ${may.slice(i, i + 200).join(', ')} TO PUBLIC`);
  if (may.length) say('changed', `gave EXECUTE on ${may.length} function(s) back to PUBLIC`);
  const not = fns.filter((f) => !f.may).map((f) => f.sig);
  if (not.length)
    say(
      'note',
      `EXECUTE stays revoked from PUBLIC on ${not.length} function(s) of other owners; they give it back with GRANT EXECUTE ON FUNCTION ... TO PUBLIC: ${not.join(', ')}`,
    );
  const owners = await queryRows<{ owner: string; may: boolean }>(
    db,
    `SELECT pg_catalog.substr(name, 25) AS owner, pg_catalog.pg_has_role(current_user, pg_catalog.substr(name, 25), 'MEMBER') AS may
       FROM ${FENCE_SCHEMA}.state WHERE name LIKE 'default!_execute!_revoked:%' ESCAPE '!'
        AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = pg_catalog.substr(name, 25))`,
  );
  for (const o of owners)
    if (o.may) {
      await db.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${q(o.owner)} GRANT EXECUTE ON FUNCTIONS TO PUBLIC`);
      say('changed', `functions ${o.owner} creates are executable by PUBLIC again`);
    } else
      say(
        'note',
        `functions ${o.owner} creates stay closed to PUBLIC; as ${o.owner}: ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO PUBLIC;`,
      );
}

/** Whether the fence is in place for these tables, and what to do when it is not. */
export async function tenantFenceStatus(
  db: SqlRunner,
  tables: readonly FenceTable[],
  options: TenantFenceOptions = {},
): Promise<FenceStatus> {
  const role = roleOf(options);
  const problems: string[] = [];
  const warnings: string[] = [];
  const fix = 'run `zmodu ai install-fence --config ...` or the fence migration (tenantFenceMigration)';
  const [r] = await queryRows<{ rolsuper: boolean; rolbypassrls: boolean }>(
    db,
    'SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = $1',
    [role],
  );
  if (!r) problems.push(`role ${role} does not exist: ${fix}`);
  else {
    if (r.rolsuper || r.rolbypassrls) problems.push(`role ${role} bypasses row-level security: the fence cannot hold`);
    const [{ can }] = await queryRows<{ can: boolean }>(
      db,
      "SELECT pg_has_role(current_user, $1, 'MEMBER') OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS can",
      [role],
    );
    if (!can)
      problems.push(`the application role may not SET ROLE ${role}: GRANT ${role} TO the application role (install-fence --app-role does)`);
    const [{ leaves }] = await queryRows<{ leaves: boolean }>(
      db,
      `SELECT has_function_privilege($1, '${SET_CONFIG}', 'EXECUTE') AS leaves`,
      [role],
    );
    if (leaves)
      warnings.push(
        `${role} may execute set_config, so a statement that got past the rewrite could leave the role: as a superuser, ` +
          `REVOKE EXECUTE ON FUNCTION ${SET_CONFIG} FROM PUBLIC and GRANT it to the application role (install-fence does it when run by a superuser)`,
      );
    const state = await openSessionState(db, role);
    if (state.length)
      warnings.push(
        `${role} may take advisory locks and set the random seed (${state.length} functions), so a statement that got past the rewrite ` +
          'could hold other sessions while it runs: as a superuser, REVOKE EXECUTE on them FROM PUBLIC and GRANT it to the application role ' +
          '(install-fence does it when run by a superuser)',
      );
    const foreign = await queryRows<{ sig: string }>(db, `SELECT ${FUNCTION_SIGNATURE} AS sig ${FOREIGN_FUNCTIONS} ORDER BY 1`, [role]);
    if (foreign.length)
      warnings.push(
        `${role} may execute ${foreign.length} function(s) outside pg_catalog (${someOf(foreign.map((f) => f.sig))}), ` +
          'which a statement that got past the rewrite could call by their qualified name: ' +
          'run install-fence again as their owner (or a superuser), or revoke EXECUTE from PUBLIC on them (audit-data lists them with their owners)',
      );
  }
  const [{ fn }] = await queryRows<{ fn: boolean }>(db, `SELECT to_regprocedure('${FENCE_SCHEMA}.tenant()') IS NOT NULL AS fn`);
  if (!fn) problems.push(`function ${FENCE_SCHEMA}.tenant() is missing: ${fix}`);
  else if ((await readFenceKey(db)) === undefined)
    problems.push(`the fence key in ${FENCE_SCHEMA}.secret cannot be read by the application role: ${fix} with --app-role`);
  for (const t of tables) {
    const info = await tableInfo(db, t);
    if (!info) {
      problems.push(`table ${tableName(t)} does not exist`);
      continue;
    }
    if (r) {
      const [{ can }] = await queryRows<{ can: boolean }>(db, "SELECT has_any_column_privilege($1, $2::oid, 'SELECT') AS can", [
        role,
        info.oid,
      ]);
      if (!can) problems.push(`${role} may not read ${tableName(t)}: ${fix}`);
    }
    if (!t.tenantColumn || (info.relkind !== 'r' && info.relkind !== 'p')) continue;
    const type = await columnType(db, info.oid, t.tenantColumn);
    const comment = await policyComment(db, info.oid, 'zmodu_fence');
    const mode = modeOf(comment);
    const inPlace =
      type !== undefined &&
      mode !== undefined &&
      comment === policies(role, t.tenantColumn, type, mode).signature &&
      (mode === 'sole' || (await policyComment(db, info.oid, 'zmodu_reader_access')) !== undefined);
    if (!info.rls) problems.push(`row-level security is off on ${tableName(t)}: ${fix}`);
    else if (!inPlace) problems.push(`the fence policies of ${tableName(t)} are missing or out of date: ${fix}`);
    else {
      const foreign = await foreignPolicies(db, info.oid);
      if (mode === 'sole' && foreign.length)
        problems.push(
          `${tableName(t)} has policies of the application (${foreign.map((f) => f.name).join(', ')}) that the fence's permissive policy ORs away: ${fix} (it then sits beside them)`,
        );
      if (mode === 'beside' && !foreign.some((f) => f.permissive))
        warnings.push(
          `no policy of the application lets roles other than ${role} read ${tableName(t)} (row-level security is on): they see no rows of it`,
        );
    }
  }
  return { installed: problems.length === 0, role, problems, warnings };
}

/** The fence key, or undefined when it is not there or not readable by the current role. */
export async function readFenceKey(db: SqlRunner): Promise<string | undefined> {
  try {
    const [row] = await queryRows<{ key: string }>(db, `SELECT key FROM ${FENCE_SCHEMA}.secret WHERE id = 1`);
    return row?.key;
  } catch {
    return undefined;
  }
}

/** A migration (TypeORM's MigrationInterface shape) that installs the fence in `up` and removes it in `down`. */
export function tenantFenceMigration(name: string, tables: readonly FenceTable[], options: TenantFenceOptions = {}) {
  if (!/\d{13}$/.test(name)) throw new TenantFenceError(DataMessages.fenceMigrationName(name));
  const migration = class {
    name = name;
    async up(queryRunner: SqlRunner): Promise<void> {
      await installTenantFence(queryRunner, tables, options);
    }
    async down(queryRunner: SqlRunner): Promise<void> {
      await uninstallTenantFence(queryRunner, tables, options);
    }
  };
  Object.defineProperty(migration, 'name', { value: name });
  return migration;
}
