import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { GuardPolicy } from '@zmodu/guard';
import { BUSINESS_SKILL_NAMES, WRITE_SKILL_NAMES } from '@zmodu/data';
import type { BusinessSkillName, DataFenceOptions, DataLimits, KpiMetric } from '@zmodu/data/internal';
import type { EntitySpec, ReportSpec } from '@zmodu/data';

/** zmodu.config.json */
export interface CliConfig {
  readonly database?: { readonly url?: string; readonly dataDir?: string };
  readonly tenantColumn?: string;
  readonly entities: EntitySpec[];
  readonly kpis?: KpiMetric[];
  readonly reports?: ReportSpec[];
  readonly policy: GuardPolicy;
  readonly limits?: DataLimits;
  /** Permissions of a call that names none. Default none. */
  readonly permissions?: string[];
  /**
   * The data skills to register, as in DataSkillsModule.forRoot (add entity.create / entity.update to write). Default:
   * the five read skills.
   */
  readonly skills?: BusinessSkillName[];
  /** db.query's second fence: { "mode": "auto" | "required" | "off", "role": "zmodu_reader" }. */
  readonly fence?: DataFenceOptions;
  /** A hazard of the data model (see audit-data) stops every command that uses the database. */
  readonly strictData?: boolean;
  /**
   * Where `call` writes its audit entries: `memory` (default: kept for the run only) or `database`
   * (table zmodu_audit_log of the config's database, created by the guard's migrations on first use).
   */
  readonly audit?: 'memory' | 'database';
}

const SKILL_NAMES: readonly string[] = [...BUSINESS_SKILL_NAMES, ...WRITE_SKILL_NAMES];

export class UsageError extends Error {}

/** Read and check a config file; every problem is one clear line. */
export function loadConfig(path: string | undefined): CliConfig {
  if (!path) throw new UsageError('--config FILE is required (a zmodu.config.json).');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read config file ${path}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`config ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const c = raw as Record<string, unknown>;
  if (!c || typeof c !== 'object' || Array.isArray(c)) throw new UsageError(`config ${path} must be a JSON object`);
  if (!Array.isArray(c.entities)) throw new UsageError(`config ${path}: "entities" must be an array of { name, table, pk, tenantColumn? }`);
  const policy = c.policy as Record<string, unknown> | undefined;
  if (!policy || !Array.isArray(policy.allow))
    throw new UsageError(`config ${path}: "policy" must be { "allow": [...], "deny": [...], "allowExecute": false }`);
  const db = c.database as Record<string, unknown> | undefined;
  if (db !== undefined && (typeof db !== 'object' || db === null || (db.url === undefined && db.dataDir === undefined)))
    throw new UsageError(`config ${path}: "database" needs "url" (PostgreSQL) or "dataDir" (embedded PGlite)`);
  if (db && db.url !== undefined && (typeof db.url !== 'string' || !/^postgres(ql)?:\/\//.test(db.url)))
    throw new UsageError(`config ${path}: "database.url" must be a postgres:// URL`);
  if (db && db.dataDir !== undefined && (typeof db.dataDir !== 'string' || db.dataDir === ''))
    throw new UsageError(`config ${path}: "database.dataDir" must be a folder path`);
  if (c.limits !== undefined && (typeof c.limits !== 'object' || c.limits === null || Array.isArray(c.limits)))
    throw new UsageError(`config ${path}: "limits" must be { "timeoutMs", "defaultRows", "maxRows", "maxBytes" }`);
  if (c.tenantColumn !== undefined && typeof c.tenantColumn !== 'string')
    throw new UsageError(`config ${path}: "tenantColumn" must be a string`);
  if (c.skills !== undefined) {
    if (!Array.isArray(c.skills) || c.skills.some((n) => typeof n !== 'string' || !SKILL_NAMES.includes(n)))
      throw new UsageError(`config ${path}: "skills" must be an array of: ${SKILL_NAMES.join(', ')}`);
  }
  if (c.audit !== undefined && c.audit !== 'memory' && c.audit !== 'database')
    throw new UsageError(`config ${path}: "audit" must be "memory" (the default) or "database" (table zmodu_audit_log)`);
  if (c.audit === 'database' && db === undefined)
    throw new UsageError(`config ${path}: "audit": "database" needs "database" ({ "url" } or { "dataDir" })`);
  if (c.strictData !== undefined && typeof c.strictData !== 'boolean')
    throw new UsageError(`config ${path}: "strictData" must be true or false`);
  const fence = c.fence as Record<string, unknown> | undefined;
  if (fence !== undefined) {
    if (!fence || typeof fence !== 'object' || Array.isArray(fence))
      throw new UsageError(`config ${path}: "fence" must be { "mode": "auto" | "required" | "off", "role": "..." }`);
    if (fence.mode !== undefined && !['auto', 'required', 'off'].includes(fence.mode as string))
      throw new UsageError(`config ${path}: "fence.mode" must be "auto", "required" or "off"`);
    if (fence.role !== undefined && (typeof fence.role !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(fence.role)))
      throw new UsageError(`config ${path}: "fence.role" must be a role name of lower-case letters, digits and '_'`);
  }
  const base = dirname(resolve(path));
  const database = db
    ? { url: db.url as string | undefined, dataDir: typeof db.dataDir === 'string' ? resolve(base, db.dataDir) : undefined }
    : undefined;
  return { ...(c as unknown as CliConfig), database };
}
