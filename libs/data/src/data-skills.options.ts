import { ownOptions } from '@zmodu/core';
import type { DataSource } from 'typeorm';
import { DataMessages } from './data.messages';
import { InvalidDataOptionsException } from './exceptions/invalid-data-options.exception';
import { DEFAULT_FENCE_ROLE } from './fence/tenant-fence';
import { DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS } from './query/read-only-query';

/** A table the data skills may read. */
export interface EntitySpec {
  /** The name the model uses, e.g. 'order'. */
  readonly name: string;
  readonly table: string;
  readonly schema?: string;
  /** Primary key column (entity.lookup). */
  readonly pk: string;
  /** Tenant column; null marks a table shared by all tenants; omitted: `dbQueryTenantColumn`. */
  readonly tenantColumn?: string | null;
  /** Columns the model may see and filter on; omitted: all columns, and no filters in entity.list. */
  readonly columns?: readonly string[];
  /** Columns entity.create/update may write; omitted: the entity is read-only. */
  readonly writable?: readonly string[];
  /** Foreign keys: column -> the entity it points at. A write must point at a record of the caller's tenant. */
  readonly references?: Readonly<Record<string, string>>;
  readonly description?: string;
}

/** An application metric for kpi.query. */
export interface KpiMetric {
  readonly name: string;
  readonly description?: string;
  /** Run for a tenant-scoped call, with the tenant as its single bind (`?` or `$1`). */
  readonly tenantSql?: string;
  /** Run for a call without a tenant (system callers). */
  readonly sql?: string;
}

/** An application aggregation report for report.generate. */
export interface ReportSpec {
  readonly name: string;
  readonly description?: string;
  /** Run for a tenant-scoped call, with the tenant as its single bind (`?` or `$1`). */
  readonly tenantSql?: string;
  /** Run for a call without a tenant. */
  readonly sql?: string;
}

export interface DataLimits {
  /** Deadline of a data skill's statement (ms), on a PostgreSQL server and on the embedded database. Default 5000. */
  readonly timeoutMs?: number;
  /** db.query rows when the model asks for no limit. Default 20. */
  readonly defaultRows?: number;
  /** Most rows any data skill returns. Default 100. */
  readonly maxRows?: number;
  /** Most JSON bytes of rows returned. Default 256 KiB. */
  readonly maxBytes?: number;
  /**
   * Data statements one tenant runs at once (every data skill counts): past it a call waits in its tenant's own line for
   * at most twice `timeoutMs`, then is refused (`tenant_busy`). On a server the share also holds across instances, in the
   * database. The embedded database runs one statement at a time, so there a tenant runs one. Default 2.
   */
  readonly maxConcurrentPerTenant?: number;
}

/** The read-only skills, registered by default. */
export const BUSINESS_SKILL_NAMES = ['db.query', 'entity.lookup', 'entity.list', 'kpi.query', 'report.generate'] as const;
/** The write skills (execute class, permission entity:write), registered only when named in `skills`. */
export const WRITE_SKILL_NAMES = ['entity.create', 'entity.update'] as const;
export type BusinessSkillName = (typeof BUSINESS_SKILL_NAMES)[number] | (typeof WRITE_SKILL_NAMES)[number];

/** db.query's second fence in the database (a reader role and row-level security; see installTenantFence). */
export interface DataFenceOptions {
  /**
   * `auto` (default): use the fence when it is installed, warn at boot when it is not;
   * `required`: boot fails without it, and a tenant's db.query is refused (`fence_missing`);
   * `off`: never use it.
   */
  readonly mode?: 'auto' | 'required' | 'off';
  /** The reader role. Default `zmodu_reader`. */
  readonly role?: string;
}

/**
 * What `DataSkillsModule.forRoot(...)` (or `forRootAsync`'s factory) takes; every field but `entities` has a default
 * (see DataSkillsOptions).
 */
export interface DataSkillsModuleOptions {
  readonly entities: EntitySpec[];
  /** The tenant column of entities that declare none. Unset: such tables fail closed (TenantScopeUnavailable) with a tenant. */
  readonly dbQueryTenantColumn?: string;
  readonly kpis?: KpiMetric[];
  readonly reports?: ReportSpec[];
  readonly limits?: DataLimits;
  /** Which skills to register. Default: the five read skills; add 'entity.create' and 'entity.update' to write. */
  readonly skills?: BusinessSkillName[];
  /** The DataSource to read; default: the application's TypeORM DataSource. */
  readonly dataSource?: DataSource;
  /** Permission each read skill requires (e.g. 'data:read'); default none. */
  readonly requiredPermission?: string;
  /** Permission the write skills require. Default 'entity:write'. */
  readonly writePermission?: string;
  /** db.query's second fence in the database. Default `{ mode: 'auto', role: 'zmodu_reader' }`. */
  readonly fence?: DataFenceOptions;
  /**
   * The data-model audit runs at boot (unique constraints that leak across tenants, missing
   * tenant indexes, shared sequences, views, tenant columns of differing types): each finding is
   * a warning, or with `strictData: true` a boot error.
   */
  readonly strictData?: boolean;
}

/** @deprecated Use DataSkillsModuleOptions (what forRoot takes) or DataSkillsOptions (the options after defaults). */
export type BusinessSkillsOptions = DataSkillsModuleOptions;

/** Data statements one tenant runs at once by default. */
export const DEFAULT_CONCURRENT_PER_TENANT = 2;

/** The most rows any data skill returns, whatever the limits say. */
export const MAX_ROWS_CAP = 100;

/**
 * The data skills' options after defaults: merged once, in the module's DATA_SKILLS_OPTIONS provider
 * (resolveDataSkillsOptions); everything else reads these, never a default of its own.
 */
export class DataSkillsOptions {
  entities: EntitySpec[] = [];
  dbQueryTenantColumn?: string;
  kpis: KpiMetric[] = [];
  reports: ReportSpec[] = [];
  limits: Required<DataLimits> = {
    timeoutMs: DEFAULT_TIMEOUT_MS,
    defaultRows: 20,
    maxRows: MAX_ROWS_CAP,
    maxBytes: DEFAULT_MAX_BYTES,
    maxConcurrentPerTenant: DEFAULT_CONCURRENT_PER_TENANT,
  };
  skills: BusinessSkillName[] = [...BUSINESS_SKILL_NAMES];
  dataSource?: DataSource;
  requiredPermission?: string;
  writePermission = 'entity:write';
  fence: Required<DataFenceOptions> = { mode: 'auto', role: DEFAULT_FENCE_ROLE };
  strictData = false;
}

/** The options as given, over the defaults (a field given as undefined keeps its default); limits and fence merge field by field. */
export function resolveDataSkillsOptions(raw: DataSkillsModuleOptions): DataSkillsOptions {
  if (!raw || typeof raw !== 'object') throw new InvalidDataOptionsException(DataMessages.optionsNotObject());
  const given = ownOptions(raw as unknown as Record<string, unknown>);
  for (const key of ['limits', 'fence'] as const)
    if (given[key] !== undefined && (typeof given[key] !== 'object' || given[key] === null || Array.isArray(given[key])))
      throw new InvalidDataOptionsException(key === 'limits' ? DataMessages.limitsNotObject() : DataMessages.fenceNotObject());
  const defaults = new DataSkillsOptions();
  return Object.assign(defaults, given, {
    limits: { ...defaults.limits, ...ownOptions((given.limits ?? {}) as Record<string, unknown>) },
    fence: { ...defaults.fence, ...ownOptions((given.fence ?? {}) as Record<string, unknown>) },
  });
}
