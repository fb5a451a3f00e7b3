import type { DataSource } from 'typeorm';

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

export class BusinessSkillsOptions {
  entities: EntitySpec[] = [];
  /** The tenant column of entities that declare none. Unset: such tables fail closed (TenantScopeUnavailable) with a tenant. */
  dbQueryTenantColumn?: string;
  kpis?: KpiMetric[] = [];
  reports?: ReportSpec[] = [];
  limits?: DataLimits = {};
  /** Which skills to register. Default: the five read skills; add 'entity.create' and 'entity.update' to write. */
  skills?: BusinessSkillName[];
  /** The DataSource to read; default: the application's TypeORM DataSource. */
  dataSource?: DataSource;
  /** Permission each read skill requires (e.g. 'data:read'); default none. */
  requiredPermission?: string;
  /** Permission the write skills require. Default 'entity:write'. */
  writePermission?: string = 'entity:write';
  /** db.query's second fence in the database. Default `{ mode: 'auto' }`. */
  fence?: DataFenceOptions = { mode: 'auto' };
  /**
   * The data-model audit runs at boot (unique constraints that leak across tenants, missing
   * tenant indexes, shared sequences, views, tenant columns of differing types): each finding is
   * a warning, or with `strictData: true` a boot error.
   */
  strictData?: boolean = false;
}
