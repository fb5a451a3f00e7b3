import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit, Optional } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isEmbeddedDataSource } from '@zmodu/db';
import { StatementSlot } from '@zmodu/db/internal';
import { queryRows } from '@zmodu/core';
import { defineSkill, SkillError } from '@zmodu/skills';
import { SkillInvocation } from '@zmodu/skills';
import { SkillRegistration } from '@zmodu/skills/internal';
import { SkillRegistry } from '@zmodu/skills';
import { DataMessages } from './data.messages';
import { InjectDataSkillsOptions } from './data-skills.module-definition';
import { DataSkillsOptions, EntitySpec, KpiMetric, MAX_ROWS_CAP, ReportSpec } from './data-skills.options';
import { DataModelHazardException } from './exceptions/data-model-hazard.exception';
import { FenceMissingException } from './exceptions/fence-missing.exception';
import { InvalidDataOptionsException } from './exceptions/invalid-data-options.exception';
import { EntityWriter } from './entity-writer';
import { toCsv } from '@zmodu/skills/internal';
import { capRows, categorize, ReadOnlyFence, ReadOnlyRun, runReadOnly } from './query/read-only-query';
import { TenantSlots } from './query/tenant-slots';
import { AuditedEntity, auditDataModel, DataAudit } from './audit/data-audit';
import { fenceSettings, FenceTable, fenceTablesFor, readFenceKey, tenantFenceStatus } from './fence/tenant-fence';
import { qualifiedTable, quoteIdent, tenantBound } from './identifiers';
import { loadSqlParser } from './sql/pg-parser';
import { MAX_CONTAINMENT_PRODUCT, MAX_SEARCH_PATTERN_LENGTH, MAX_SEARCHED_LENGTH, SqlGuard } from './sql/sql-guard';
import { readColumnShapes } from './query/column-shapes';
import { SqlRefusal } from './sql/sql-refusal';
import { tenantSpellingProblem } from './tenant-spelling';

const SOURCE = 'DataSkillsModule';
/** How often a missing fence is looked for again (it may be installed while the app runs). */
const FENCE_RECHECK_MS = 60_000;
const REPORT_ROW_CAP = 100;
/** How often db.query reads the registered tables' columns again (a migration may add or change one while the app runs). */
const COLUMNS_RECHECK_MS = 60_000;

interface ResolvedEntity extends EntitySpec {
  /** The tenant column after defaults: a name, null (shared), or undefined (unknown: fail closed). */
  readonly resolvedTenantColumn: string | null | undefined;
}

/** Limits are whole numbers in range, and the fence mode one of three: a typo must fail boot, not every call. */
function checkOptions(o: DataSkillsOptions): void {
  const limits = o.limits;
  const ranges: Array<[keyof DataSkillsOptions['limits'], number, number, string]> = [
    ['timeoutMs', 1, 600_000, 'milliseconds, at most 10 minutes'],
    ['defaultRows', 1, MAX_ROWS_CAP, `rows, at most ${MAX_ROWS_CAP}`],
    ['maxRows', 1, MAX_ROWS_CAP, `rows, at most ${MAX_ROWS_CAP}`],
    ['maxBytes', 1024, 64 * 1024 * 1024, 'bytes, from 1 KiB to 64 MiB'],
    ['maxConcurrentPerTenant', 1, 64, 'statements, from 1 to 64'],
  ];
  for (const [key, min, max, what] of ranges) {
    const v = (limits as Record<string, unknown>)[key];
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max))
      throw new InvalidDataOptionsException(DataMessages.limitOutOfRange(key, what, v));
  }
  if (!['auto', 'required', 'off'].includes(o.fence.mode))
    throw new InvalidDataOptionsException(DataMessages.fenceModeInvalid(o.fence.mode));
}

/**
 * The read-only data and business skills of the spec (db.query, entity.lookup, entity.list,
 * kpi.query, report.generate), registered into the SkillRegistry, so they run only through
 * the dispatcher and its guard.
 */
@Injectable()
export class BusinessSkills implements OnModuleInit, OnApplicationBootstrap {
  /** The tenant column types, read by the boot audit (see checkTenant). */
  private tenantTypes: readonly string[] | undefined;
  private readonly logger = new Logger('BusinessSkills');
  /** The fence as last found: its role and key when installed, null when not, undefined before the first look. */
  private fenceState: { role: string; key: string } | null | undefined;
  private fenceCheckedAt = 0;
  private fenceProblems: string[] = [];
  private readonly entities = new Map<string, ResolvedEntity>();
  private readonly kpis = new Map<string, KpiMetric>();
  private readonly reports = new Map<string, ReportSpec>();
  private readonly guard: SqlGuard;
  private readonly maxRows: number;
  private readonly defaultRows: number;
  private readonly writer: EntityWriter;
  /** Data statements each tenant runs at once, in this process (see TenantSlots). */
  readonly slots: TenantSlots;
  /** When db.query last read the registered tables' columns (0: never), and the read under way. */
  private columnsReadAt = 0;
  private columnsReading: Promise<void> | undefined;

  constructor(
    @InjectDataSkillsOptions() private readonly options: DataSkillsOptions,
    private readonly registry: SkillRegistry,
    @Optional() @Inject(getDataSourceToken()) private readonly appDataSource?: DataSource,
  ) {
    const o = this.options;
    if (!Array.isArray(o.entities)) throw new InvalidDataOptionsException(DataMessages.entitiesNotArray());
    for (const key of ['kpis', 'reports'] as const)
      if (!Array.isArray(o[key])) throw new InvalidDataOptionsException(DataMessages.listNotArray(key));
    checkOptions(o);
    if (o.dbQueryTenantColumn !== undefined) quoteIdent(o.dbQueryTenantColumn, 'dbQueryTenantColumn');
    for (const e of o.entities) this.addEntity(e);
    for (const k of o.kpis) {
      if (!k?.name || (!k.tenantSql && !k.sql)) throw new InvalidDataOptionsException(DataMessages.kpiInvalid(k?.name));
      if (k.tenantSql) tenantBound(k.tenantSql, `kpi ${k.name} tenantSql`);
      this.kpis.set(k.name, k);
    }
    for (const r of o.reports) {
      if (!r?.name || (!r.tenantSql && !r.sql)) throw new InvalidDataOptionsException(DataMessages.reportInvalid(r?.name));
      if (r.tenantSql) tenantBound(r.tenantSql, `report ${r.name} tenantSql`);
      this.reports.set(r.name, r);
    }
    this.maxRows = o.limits.maxRows;
    // The embedded database runs one statement at a time: a second statement of a tenant would only wait in the
    // session's line, ahead of other tenants'; in its tenant's own line it waits behind that tenant alone.
    const ds = o.dataSource ?? appDataSource;
    const embedded = ds !== undefined && isEmbeddedDataSource(ds.options);
    // A call waits for about one round of its tenant's statements (each ends within its deadline and a grace).
    this.slots = new TenantSlots(embedded ? 1 : o.limits.maxConcurrentPerTenant, 2 * o.limits.timeoutMs);
    this.defaultRows = Math.min(this.maxRows, o.limits.defaultRows);
    for (const e of this.entities.values())
      for (const [column, target] of Object.entries(e.references ?? {})) {
        quoteIdent(column, `reference of entity ${e.name}`);
        if (!this.entities.has(target)) throw new InvalidDataOptionsException(DataMessages.unknownReference(e.name, target, column));
      }
    this.writer = new EntityWriter(
      () => this.dataSource,
      (name) => this.entity(name),
      (tenantId) => ({ timeoutMs: o.limits.timeoutMs, slot: this.slotOf(tenantId) }),
    );
    this.guard = new SqlGuard(
      [...this.entities.values()].map((e) => ({
        table: e.table,
        // Schema-qualified always (the fence's default schema): a model's statement runs with search_path pinned to pg_catalog.
        schema: e.schema ?? 'public',
        tenantColumn: e.resolvedTenantColumn,
        columns: e.columns,
      })),
    );
  }

  async onModuleInit(): Promise<void> {
    await loadSqlParser();
    const wanted = new Set<string>(this.options.skills);
    for (const skill of [...this.skills(), ...this.writeSkills()]) {
      if (!wanted.has(skill.name)) continue;
      // A skill with nothing to serve is not offered: no empty enum in the catalog, and an allow list naming it is reported.
      const missing = this.nothingToServe(skill.name);
      // Every data skill first checks the caller's tenant id has the one spelling of its tenant column's type, then runs in
      // one of its tenant's slots: a tenant holds at most that many statements of the database at once.
      const handler = skill.handler;
      const bounded: SkillRegistration['handler'] = (args, ctx) => {
        this.checkTenant(ctx);
        const tenant = ctx.tenantId;
        return tenant === undefined ? handler(args, ctx) : this.slots.run(tenant, ctx.signal, async () => handler(args, ctx));
      };
      if (missing === undefined) this.registry.register({ ...skill, handler: bounded });
      else this.logger.log(`${skill.name} is not registered: ${missing}.`);
    }
  }

  /** Why a skill has nothing to serve (undefined: it has). */
  private nothingToServe(name: string): string | undefined {
    switch (name) {
      case 'db.query':
      case 'entity.lookup':
      case 'entity.list':
        return this.entities.size ? undefined : 'no entities are registered';
      case 'entity.create':
      case 'entity.update':
        return [...this.entities.values()].some((e) => e.writable?.length) ? undefined : 'no entity declares writable columns';
      case 'kpi.query':
        return this.kpis.size ? undefined : 'no metrics are registered (kpis)';
      case 'report.generate':
        return this.reports.size ? undefined : 'no reports are registered (reports)';
      default:
        return undefined;
    }
  }

  /** After migrations ran (TypeORM runs them when the DataSource starts): the data-model audit, then db.query's second fence. */
  async onApplicationBootstrap(): Promise<void> {
    if (!(this.options.dataSource ?? this.appDataSource)) return;
    await this.readServerVersion();
    await this.readColumns().catch((err: Error) =>
      this.logger.warn(`Could not read the registered tables' columns (db.query reads them at its first call): ${err.message}`),
    );
    await this.auditAtBoot();
    await this.fenceAtBoot();
  }

  /**
   * An integer or uuid tenant column reads many spellings of one id as that id ('01', ' 1', '+1' as 1; an
   * upper-case or braced uuid): the rows would be another spelling's than the one the audit, the quota and the
   * pipeline key on. Only the canonical spelling of each tenant column type is accepted. Before the boot audit
   * has read the types (or when it could not), spellings with surrounding spaces or control characters are refused.
   */
  private checkTenant(ctx: SkillInvocation): void {
    const tenant = ctx.tenantId;
    if (tenant === undefined) return;
    const problem = tenantSpellingProblem(tenant, this.tenantTypes);
    if (problem)
      throw new SkillError('invalid_tenant', `The caller's tenant id ${JSON.stringify(tenant)} ${problem}.`, undefined, 'InvalidTenant');
  }

  /** The entities as the data-model audit sees them. */
  auditedEntities(): AuditedEntity[] {
    return [...this.entities.values()].map((e) => ({
      name: e.name,
      table: e.table,
      schema: e.schema,
      tenantColumn: e.resolvedTenantColumn,
      writable: e.writable,
    }));
  }

  /** The data-model audit of the registered entities (see auditDataModel). */
  auditData(): Promise<DataAudit> {
    return auditDataModel(this.dataSource, this.auditedEntities(), {
      readerRole: this.fenceMode === 'off' ? undefined : this.fenceRole,
    });
  }

  private async auditAtBoot(): Promise<void> {
    const strict = this.options.strictData;
    let audit: DataAudit;
    try {
      audit = await this.auditData();
    } catch (err) {
      if (strict) throw err;
      this.logger.warn(`Could not audit the data model: ${(err as Error).message}`);
      return;
    }
    this.tenantTypes = audit.tenantTypes;
    if (!audit.findings.length) return;
    const lines = audit.findings.map((f) => `${f.code} on ${f.table}: ${f.detail}; fix: ${f.fix}`);
    if (strict) throw new DataModelHazardException(DataMessages.dataModelHazards(lines), audit.findings);
    for (const line of lines) this.logger.warn(`data model: ${line}`);
  }

  /**
   * The registered tables' columns and how each reaches a model's statement (see SqlGuard.useColumns): read at boot and
   * again at most every COLUMNS_RECHECK_MS, by the db.query that finds them old. Never read, db.query does not run.
   */
  private readColumns(): Promise<void> {
    this.columnsReading ??= (async () => {
      try {
        const tables = [...this.entities.values()].map((e) => ({ schema: e.schema ?? 'public', table: e.table }));
        this.guard.useColumns(await readColumnShapes(this.dataSource, tables));
        this.columnsReadAt = Date.now();
      } finally {
        this.columnsReading = undefined;
      }
    })();
    return this.columnsReading;
  }

  private async freshColumns(): Promise<void> {
    if (Date.now() - this.columnsReadAt < COLUMNS_RECHECK_MS) return;
    try {
      await this.readColumns();
    } catch (err) {
      if (this.columnsReadAt === 0)
        throw new SkillError(
          categorize(err),
          "db.query could not read the registered tables' columns, so it does not run yet: retry later.",
          { retryable: true },
          'QueryFailed',
        );
      this.logger.warn(`Could not read the registered tables' columns again (db.query keeps those it read): ${(err as Error).message}`);
    }
  }

  /** db.query refuses syntax newer than the server it runs on (with what to write instead), rather than send it to fail there. */
  private async readServerVersion(): Promise<void> {
    try {
      const [row] = await queryRows<{ version: string }>(this.dataSource, "SELECT current_setting('server_version_num') AS version");
      const version = Number(row?.version);
      if (Number.isSafeInteger(version) && version > 0) this.guard.useServerVersion(version);
    } catch (err) {
      this.logger.warn(`Could not read the database's version (db.query accepts all the syntax it knows): ${(err as Error).message}`);
    }
  }

  private async fenceAtBoot(): Promise<void> {
    const mode = this.fenceMode;
    if (mode === 'off' || !this.registry.has('db.query')) return;
    let found: { role: string; key: string } | null;
    try {
      found = await this.lookForFence();
    } catch (err) {
      if (mode === 'required') throw err;
      this.logger.warn(`Could not look for db.query's second fence: ${(err as Error).message}`);
      return;
    }
    if (found) return;
    if (mode === 'required')
      throw new FenceMissingException(DataMessages.fenceMissing(this.fenceRole, this.fenceProblems), this.fenceProblems);
    this.logger.warn(DataMessages.fenceMissingWarning(this.fenceRole, this.fenceProblems));
  }

  /** The tables of the fence: every entity whose tenant column is known (the others are refused with a tenant anyway). */
  fenceTables(): FenceTable[] {
    return fenceTablesFor({ entities: [...this.entities.values()], dbQueryTenantColumn: this.options.dbQueryTenantColumn });
  }

  private get fenceMode(): 'auto' | 'required' | 'off' {
    return this.options.fence.mode;
  }

  private get fenceRole(): string {
    return this.options.fence.role;
  }

  private async lookForFence(): Promise<{ role: string; key: string } | null> {
    this.fenceCheckedAt = Date.now();
    const status = await tenantFenceStatus(this.dataSource, this.fenceTables(), { role: this.fenceRole });
    const key = status.installed ? await readFenceKey(this.dataSource) : undefined;
    this.fenceProblems = status.problems;
    this.fenceState = key ? { role: status.role, key } : null;
    return this.fenceState;
  }

  /** The fence for a tenant's db.query: undefined when it runs without one (off, or auto and not installed). */
  private async fenceFor(tenantId: string): Promise<ReadOnlyFence | undefined> {
    const mode = this.fenceMode;
    if (mode === 'off') return undefined;
    if (this.fenceState === undefined || (this.fenceState === null && Date.now() - this.fenceCheckedAt > FENCE_RECHECK_MS))
      await this.lookForFence();
    const state = this.fenceState;
    if (!state) {
      if (mode === 'required')
        throw new SkillError(
          'fence_missing',
          'The database fence for db.query is not installed, so db.query is off for now.',
          undefined,
          'QueryRefused',
        );
      return undefined;
    }
    return { role: state.role, settings: (processId) => fenceSettings(state.key, processId, tenantId) };
  }

  private get dataSource(): DataSource {
    const ds = this.options.dataSource ?? this.appDataSource;
    if (!ds) throw new SkillError('not_configured', 'No database is configured for the data skills.');
    return ds;
  }

  private addEntity(e: EntitySpec): void {
    if (!e || typeof e.name !== 'string' || !/^[a-z][a-z0-9_]*$/.test(e.name))
      throw new InvalidDataOptionsException(DataMessages.entityNameInvalid(e?.name));
    if (this.entities.has(e.name)) throw new InvalidDataOptionsException(DataMessages.entityNameTaken(e.name));
    qualifiedTable(e.table, e.schema);
    quoteIdent(e.pk, `pk of entity ${e.name}`);
    if (e.tenantColumn) quoteIdent(e.tenantColumn, `tenantColumn of entity ${e.name}`);
    for (const c of e.columns ?? []) quoteIdent(c, `column of entity ${e.name}`);
    for (const c of e.writable ?? []) quoteIdent(c, `writable column of entity ${e.name}`);
    const resolved = e.tenantColumn === null ? null : (e.tenantColumn ?? this.options.dbQueryTenantColumn);
    this.entities.set(e.name, { ...e, resolvedTenantColumn: resolved });
  }

  private common() {
    return { requiredPermission: this.options.requiredPermission, source: SOURCE };
  }

  private skills(): SkillRegistration[] {
    const entityNames = [...this.entities.keys()];
    const entityProp = { type: 'string', enum: entityNames, description: 'Entity name' } as const;
    return [
      defineSkill({
        ...this.common(),
        name: 'db.query',
        action: 'read',
        description:
          `Run one read-only SELECT over the tables ${this.guard.tableNames().join(', ') || '(none)'}. ` +
          'Values go in args, one per ? placeholder; no literals, comments or ";". Rows are limited (default 20, at most 100). ' +
          "You only ever see your own tenant's rows.",
        parameters: {
          type: 'object',
          properties: {
            sql: { type: 'string', minLength: 1, maxLength: 10_000 },
            args: { type: 'array', maxItems: 100, description: 'Values for the ? placeholders, in order' },
            limit: { type: 'integer', minimum: 1, maximum: this.maxRows },
          },
          required: ['sql'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.dbQuery(args, ctx),
      }),
      defineSkill({
        ...this.common(),
        name: 'entity.lookup',
        action: 'read',
        description: 'Look up one record of a registered entity by its primary key.',
        parameters: {
          type: 'object',
          properties: { entity: entityProp, id: { type: ['string', 'integer'] } },
          required: ['entity', 'id'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.lookup(args, ctx),
      }),
      defineSkill({
        ...this.common(),
        name: 'entity.list',
        action: 'read',
        description: 'List records of a registered entity, with equality filters on its declared columns.',
        parameters: {
          type: 'object',
          properties: {
            entity: entityProp,
            filters: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } },
            limit: { type: 'integer', minimum: 1, maximum: this.maxRows },
          },
          required: ['entity'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.list(args, ctx),
      }),
      defineSkill({
        ...this.common(),
        name: 'kpi.query',
        action: 'read',
        tenantScoped: false,
        description: `Read an application metric: ${[...this.kpis.values()].map((k) => `${k.name}${k.description ? ` (${k.description})` : ''}`).join('; ')}.`,
        parameters: {
          type: 'object',
          properties: { metric: { type: 'string', enum: [...this.kpis.keys()] } },
          required: ['metric'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.kpi(args, ctx),
      }),
      defineSkill({
        ...this.common(),
        name: 'report.generate',
        action: 'read',
        tenantScoped: false,
        description: `Run an application report as CSV or JSON (at most ${REPORT_ROW_CAP} rows): ${[...this.reports.values()].map((r) => `${r.name}${r.description ? ` (${r.description})` : ''}`).join('; ')}.`,
        parameters: {
          type: 'object',
          properties: {
            report: { type: 'string', enum: [...this.reports.keys()] },
            format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
          },
          required: ['report'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.report(args, ctx),
      }),
    ];
  }

  private writeSkills(): SkillRegistration[] {
    const writable = [...this.entities.values()].filter((e) => e.writable?.length).map((e) => e.name);
    const entityProp = { type: 'string', enum: writable, description: 'Entity name' } as const;
    const values = {
      type: 'object',
      description: 'column: value, writable columns only (never the tenant column or the primary key)',
    } as const;
    const common = { action: 'execute' as const, requiredPermission: this.options.writePermission, source: SOURCE };
    const describe = writable.map((n) => `${n} (${(this.entities.get(n)?.writable ?? []).join(', ')})`).join('; ');
    return [
      defineSkill({
        ...common,
        name: 'entity.create',
        description: `Create a record of a writable entity: ${describe}. The tenant is set for you.`,
        parameters: {
          type: 'object',
          properties: { entity: entityProp, values },
          required: ['entity', 'values'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.writer.create(args.entity, args.values, ctx.tenantId),
      }),
      defineSkill({
        ...common,
        name: 'entity.update',
        description: `Update writable columns of a record of your tenant: ${describe}.`,
        parameters: {
          type: 'object',
          properties: { entity: entityProp, id: { type: ['string', 'integer'] }, values },
          required: ['entity', 'id', 'values'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.writer.update(args.entity, args.id, args.values, ctx.tenantId),
      }),
    ];
  }

  // ---------------------------------------------------------------- handlers

  async dbQuery(args: { sql: string; args?: unknown[]; limit?: number }, ctx: SkillInvocation) {
    const rows = Math.min(this.maxRows, args.limit ?? this.defaultRows);
    await this.freshColumns();
    let prepared;
    try {
      prepared = this.guard.prepare({ sql: args.sql, args: args.args, tenantId: ctx.tenantId, maxRows: rows });
    } catch (err) {
      if (err instanceof SqlRefusal)
        throw new SkillError(
          err.reason,
          err.message,
          undefined,
          err.reason === 'TenantScopeUnavailable' ? 'TenantScopeUnavailable' : 'QueryRefused',
        );
      throw err;
    }
    const fence = ctx.tenantId !== undefined ? await this.fenceFor(ctx.tenantId) : undefined;
    try {
      return await runReadOnly(this.dataSource, prepared.text, prepared.values, this.limits(rows), fence, {
        ...this.bounds(ctx),
        untrusted: true,
      });
    } catch (err) {
      if (err instanceof SkillError && err.reason === 'value_too_large')
        throw new SkillError(
          err.reason,
          `A value is too long: a text that LIKE, ILIKE, strpos, position, replace, split_part or trim searches holds at most ` +
            `${MAX_SEARCHED_LENGTH} characters, and what it looks for (a pattern, a replacement, the characters to trim) at most ` +
            `${MAX_SEARCH_PATTERN_LENGTH}; the sizes in bytes of the two sides of @> or <@, multiplied, stay below ` +
            `${MAX_CONTAINMENT_PRODUCT}. Search shorter texts, or for shorter patterns; test containment on smaller values.`,
          undefined,
          'QueryRefused',
        );
      throw err;
    }
  }

  async lookup(args: { entity: string; id: string | number }, ctx: SkillInvocation) {
    const e = this.entity(args.entity);
    const values: unknown[] = [args.id];
    let sql = `SELECT ${this.selectList(e)} FROM ${qualifiedTable(e.table, e.schema)} WHERE ${quoteIdent(e.pk, 'pk')} = $1`;
    sql += this.tenantFilter(e, ctx, values);
    const result = await runReadOnly(this.dataSource, capRows(sql, 1), values, this.limits(1), undefined, this.bounds(ctx));
    return { entity: e.name, found: result.rowCount > 0, record: result.rows[0] ?? null };
  }

  async list(args: { entity: string; filters?: Record<string, unknown>; limit?: number }, ctx: SkillInvocation) {
    const e = this.entity(args.entity);
    const values: unknown[] = [];
    const where: string[] = [];
    const allowed = new Set(e.columns ?? []);
    for (const [column, value] of Object.entries(args.filters ?? {})) {
      if (!allowed.has(column) || column === e.resolvedTenantColumn)
        throw new SkillError(
          'filter_not_allowed',
          `Cannot filter ${e.name} on '${column}'. Filterable columns: ${[...allowed].filter((c) => c !== e.resolvedTenantColumn).join(', ') || '(none declared)'}.`,
          undefined,
          'QueryRefused',
        );
      if (value === null) where.push(`${quoteIdent(column, 'column')} IS NULL`);
      else {
        values.push(value);
        where.push(`${quoteIdent(column, 'column')} = $${values.length}`);
      }
    }
    let sql = `SELECT ${this.selectList(e)} FROM ${qualifiedTable(e.table, e.schema)} WHERE ${where.length ? where.join(' AND ') : 'TRUE'}`;
    sql += this.tenantFilter(e, ctx, values);
    sql += ` ORDER BY ${quoteIdent(e.pk, 'pk')}`;
    const rows = Math.min(this.maxRows, args.limit ?? this.defaultRows);
    const result = await runReadOnly(this.dataSource, capRows(sql, rows), values, this.limits(rows), undefined, this.bounds(ctx));
    return { entity: e.name, ...result };
  }

  async kpi(args: { metric: string }, ctx: SkillInvocation) {
    const metric = this.kpis.get(args.metric);
    if (!metric)
      throw new SkillError(
        'unknown_metric',
        `No metric '${args.metric}'. Metrics: ${[...this.kpis.keys()].join(', ') || '(none)'}.`,
        undefined,
        'QueryRefused',
      );
    const { sql, values } = this.scopedStatement(metric, ctx, 'metric');
    const result = await runReadOnly(this.dataSource, capRows(sql, 1), values, this.limits(1), undefined, this.bounds(ctx));
    const row = result.rows[0];
    return { metric: metric.name, value: row ? (Object.values(row)[0] ?? null) : null };
  }

  async report(args: { report: string; format?: 'json' | 'csv' }, ctx: SkillInvocation) {
    const report = this.reports.get(args.report);
    if (!report)
      throw new SkillError(
        'unknown_report',
        `No report '${args.report}'. Reports: ${[...this.reports.keys()].join(', ') || '(none)'}.`,
        undefined,
        'QueryRefused',
      );
    const { sql, values } = this.scopedStatement(report, ctx, 'report');
    const result = await runReadOnly(
      this.dataSource,
      capRows(sql, REPORT_ROW_CAP),
      values,
      this.limits(REPORT_ROW_CAP),
      undefined,
      this.bounds(ctx),
    );
    const format = args.format ?? 'json';
    const base = { report: report.name, format, rowCount: result.rowCount, truncated: result.truncated };
    return format === 'csv'
      ? { ...base, csv: toCsv(result.columns, result.rows) }
      : { ...base, columns: result.columns, rows: result.rows };
  }

  // ---------------------------------------------------------------- helpers

  private entity(name: string): ResolvedEntity {
    const e = this.entities.get(name);
    if (!e)
      throw new SkillError(
        'unknown_entity',
        `No entity '${name}'. Entities: ${[...this.entities.keys()].join(', ') || '(none)'}.`,
        undefined,
        'QueryRefused',
      );
    return e;
  }

  private selectList(e: ResolvedEntity): string {
    return e.columns?.length ? [...new Set([e.pk, ...e.columns])].map((c) => quoteIdent(c, 'column')).join(', ') : '*';
  }

  /** ` AND tenant = $n` for a tenant-scoped call; fails closed when the entity's tenant column is unknown. */
  private tenantFilter(e: ResolvedEntity, ctx: SkillInvocation, values: unknown[]): string {
    if (!ctx.tenantId || e.resolvedTenantColumn === null) return '';
    if (e.resolvedTenantColumn === undefined)
      throw new SkillError(
        'TenantScopeUnavailable',
        `Entity ${e.name} has no tenant column configured.`,
        undefined,
        'TenantScopeUnavailable',
      );
    values.push(ctx.tenantId);
    return ` AND ${quoteIdent(e.resolvedTenantColumn, 'tenant column')} = $${values.length}`;
  }

  private scopedStatement(def: KpiMetric | ReportSpec, ctx: SkillInvocation, what: string): { sql: string; values: unknown[] } {
    if (ctx.tenantId) {
      if (!def.tenantSql)
        throw new SkillError(
          'TenantScopeUnavailable',
          `The ${what} ${def.name} declares no tenant query, so it cannot be read for a tenant.`,
          undefined,
          'TenantScopeUnavailable',
        );
      return { sql: tenantBound(def.tenantSql, what), values: [ctx.tenantId] };
    }
    if (!def.sql)
      throw new SkillError('TenantRequired', `The ${what} ${def.name} can only be read for a tenant.`, undefined, 'TenantRequired');
    return { sql: def.sql, values: [] };
  }

  /** The tenant's share of the database on a server, across instances (the in-process share is `slots`). */
  private slotOf(tenantId: string | undefined): StatementSlot | undefined {
    return tenantId === undefined ? undefined : { key: `zmodu:tenant:${tenantId}`, limit: this.options.limits.maxConcurrentPerTenant };
  }

  /** The call's signal (a caller that gives up has its statement cancelled on the server) and its tenant's slot. */
  private bounds(ctx: SkillInvocation): ReadOnlyRun {
    return { signal: ctx.signal, slot: this.slotOf(ctx.tenantId) };
  }

  private limits(maxRows: number) {
    const l = this.options.limits;
    return { timeoutMs: l.timeoutMs, maxRows, maxBytes: l.maxBytes };
  }
}
