/**
 * The messages of @zmodu/data's exceptions: each says what is wrong and what to do about it.
 * One factory per message, so that a message is written once (nestjs/schedule `schedule.messages.ts`).
 */
export const DataMessages = {
  optionsNotObject: () =>
    'DataSkillsModule: the options must be an object { entities, dbQueryTenantColumn?, kpis?, reports?, limits?, ... } ' +
    '(pass them to DataSkillsModule.forRoot, or return them from the useFactory of forRootAsync).',
  limitsNotObject: () =>
    'DataSkillsModule: limits must be an object { timeoutMs, defaultRows, maxRows, maxBytes, maxConcurrentPerTenant }.',
  fenceNotObject: () => "DataSkillsModule: fence must be an object { mode: 'auto' | 'required' | 'off', role }.",
  limitOutOfRange: (key: string, what: string, got: unknown) =>
    `DataSkillsModule: limits.${key} must be a whole number of ${what} (got ${JSON.stringify(got)}).`,
  fenceModeInvalid: (got: unknown) => `DataSkillsModule: fence.mode must be 'auto', 'required' or 'off' (got ${JSON.stringify(got)}).`,
  entitiesNotArray: () =>
    'DataSkillsModule: entities must be an array of { name, table, pk, tenantColumn?, columns? } (an empty array registers no entity skill).',
  entityNameInvalid: (name: unknown) =>
    `DataSkillsModule: entity name ${JSON.stringify(name)} must be lower-case letters, digits and '_' (the name the model uses, e.g. 'order').`,
  entityNameTaken: (name: string) => `DataSkillsModule: two entities are named '${name}': give each its own name.`,
  unknownReference: (entity: string, target: string, column: string) =>
    `DataSkillsModule: entity ${entity} references unknown entity '${target}' (column ${column}): register '${target}' too, or drop the reference.`,
  listNotArray: (key: 'kpis' | 'reports') =>
    `DataSkillsModule: ${key} must be an array of { name, description?, tenantSql?, sql? } (omit it for none).`,
  kpiInvalid: (name: unknown) =>
    `DataSkillsModule: kpi ${JSON.stringify(name)} needs a name and tenantSql (for tenants, one ? bind) and/or sql (for system callers).`,
  reportInvalid: (name: unknown) =>
    `DataSkillsModule: report ${JSON.stringify(name)} needs a name and tenantSql (for tenants, one ? bind) and/or sql (for system callers).`,
  identifierInvalid: (what: string, name: unknown) =>
    `Invalid ${what} ${JSON.stringify(name)}: use letters, digits and '_' (at most 63 characters).`,
  tenantBindMissing: (what: string) => `${what} must have exactly one tenant bind (? or $1): the tenant's id is bound there.`,
  maxRowsInvalid: (got: unknown) => `SqlGuard.prepare: maxRows must be a positive whole number (got ${JSON.stringify(got)}).`,
  parserNotLoaded: () =>
    'The SQL parser is not loaded: await loadSqlParser() first (DataSkillsModule does it at boot, before the skills are registered).',
  dataModelHazards: (lines: readonly string[]) =>
    `DataSkillsModule (strictData): the data model has ${lines.length} hazard(s):\n- ${lines.join('\n- ')}\n` +
    'Fix them (each says how; `zmodu ai audit-data` lists them), or set strictData: false to boot with warnings.',
  fenceMissing: (role: string, problems: readonly string[]) =>
    `DataSkillsModule (fence: required): db.query's second fence (reader role ${role} and row-level security) is not installed: ` +
    `${problems.join('; ')}. Install it with \`zmodu ai install-fence --config ...\` or a migration made with tenantFenceMigration(...), ` +
    "or set fence: { mode: 'auto' } to boot without it.",
  fenceMissingWarning: (role: string, problems: readonly string[]) =>
    `db.query's second fence (reader role ${role} and row-level security) is not installed: ${problems.join('; ')}. ` +
    'Install it with `zmodu ai install-fence --config ...` or a migration made with tenantFenceMigration(...). ' +
    'Until then db.query relies on its rewrite alone.',
  fenceRoleInvalid: (role: unknown) =>
    `The fence role ${JSON.stringify(role)} must be lower-case letters, digits and '_' (e.g. zmodu_reader).`,
  fenceRoleBypassesRls: (role: string) =>
    `Role ${role} exists and bypasses row-level security (superuser or BYPASSRLS): the fence cannot hold. Name another role.`,
  fenceRoleIsMember: (role: string) =>
    `Role ${role} is a member of other roles, whose privileges it would have: the fence role must be a member of none.`,
  fenceRoleIsAppRole: () => 'The application role cannot be the fence role itself: name another fence role (--role).',
  fenceTableMissing: (table: string) => `Table ${table} does not exist: create it before installing the fence.`,
  fenceTenantColumnMissing: (table: string, column: string) => `Table ${table} has no column ${column}: fix tenantColumn in the entity.`,
  fenceMigrationName: (name: unknown) =>
    `A migration name ends with a 13-digit timestamp, like ZmoduFence1764470000000 (got ${JSON.stringify(name)}).`,
} as const;
