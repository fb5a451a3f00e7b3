import { TestingModule, Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { Guard, GuardModule } from '@zmodu/guard';
import { createSkillContext, SkillCallResult, SkillDispatcher, SkillsModule } from '@zmodu/skills';
import { BusinessSkills, DataSkillsModule, DataSkillsModuleOptions, installTenantFence } from '@zmodu/data';
import { DataSource } from 'typeorm';
import { ALPHA, ENTITIES, KPIS, REPORTS, seedBusinessData } from './business-fixture';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';

export const DATA_SKILLS = ['db.query', 'entity.lookup', 'entity.list', 'kpi.query', 'report.generate'];

export interface BusinessApp {
  readonly app: TestingModule;
  readonly ds: DataSource;
  readonly db: TestDatabase;
  /** Dispatch through the one dispatcher, as tenant alpha (or as given). */
  call(skill: string, args: unknown, tenantId?: string | null): Promise<SkillCallResult>;
  close(): Promise<void>;
}

export interface BusinessAppSetup {
  /** The search path of every connection of the app (as an application's role or database may set it). */
  readonly searchPath?: string;
  /** Run after the data is seeded, before the fence is installed and the module starts (as the application's owner). */
  readonly prepare?: (ds: DataSource) => Promise<void>;
}

/**
 * The data skills over two tenants' data, with db.query's second fence installed (mode `required`,
 * so every tenant's db.query runs under it) unless `options.fence` says otherwise.
 */
export async function startBusinessApp(
  options: Partial<DataSkillsModuleOptions> = {},
  perTenant = 60,
  setup: BusinessAppSetup = {},
): Promise<BusinessApp> {
  const db = await createTestDatabase();
  // On a server, every connection of the pool starts with the search path; the embedded database has one session.
  const dsOptions = await db.options(
    setup.searchPath ? { extra: { options: `-c search_path=${setup.searchPath.replace(/\s+/g, '')}` } } : {},
  );
  const fence = options.fence ?? { mode: 'required' as const, role: db.fenceRole };
  const app = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(dsOptions),
      GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
      SkillsModule.forRoot(),
      DataSkillsModule.forRoot({
        entities: ENTITIES,
        dbQueryTenantColumn: 'tenant_id',
        kpis: KPIS,
        reports: REPORTS,
        ...options,
        fence,
      }),
    ],
  }).compile();
  // The DataSource exists (and migrations ran) at compile; the module looks for the fence at init.
  const ds = app.get<DataSource>(getDataSourceToken());
  if (setup.searchPath && db.kind === 'pglite') await ds.query(`SET search_path = ${setup.searchPath}`);
  await seedBusinessData(ds, perTenant);
  await setup.prepare?.(ds);
  if (fence.mode !== 'off') await ds.transaction((m) => installTenantFence(m, app.get(BusinessSkills).fenceTables(), { role: fence.role }));
  await app.init();
  const dispatcher = app.get(SkillDispatcher);
  return {
    app,
    ds,
    db,
    call: (skill, args, tenantId = ALPHA) =>
      dispatcher.dispatch(
        createSkillContext({
          guard: new Guard({ allow: DATA_SKILLS, allowExecute: false }),
          tenantId,
          userId: 'analyst',
          agent: 'analyst',
        }),
        skill,
        args,
      ),
    close: async () => {
      await app.close();
      await db.drop();
    },
  };
}
