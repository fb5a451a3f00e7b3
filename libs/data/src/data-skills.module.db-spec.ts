import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { Guard, GuardModule } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher, SkillRegistry, SkillsModule } from '@zmodu/skills';
import { BusinessSkillsModule, DataSkillsModule, DataSkillsModuleOptions, DataSkillsOptions } from '@zmodu/data';
import { DATA_SKILLS_OPTIONS } from '@zmodu/data/internal';
import { InvalidDataOptionsException, InvalidIdentifierException } from '@zmodu/data/internal';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { DataSource } from 'typeorm';
import { ALPHA, ENTITIES, KPIS, seedBusinessData } from './__fixtures__/business-fixture';

/** What an application's configuration would hold. */
@Injectable()
class DeskConfig {
  readonly defaultRows = 3;
  readonly metrics = KPIS;
}

@Module({ providers: [DeskConfig], exports: [DeskConfig] })
class DeskConfigModule {}

describe('DataSkillsModule', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    const ds = new DataSource(await db.options());
    await ds.initialize();
    await seedBusinessData(ds, 10);
    await ds.destroy();
  });

  afterAll(async () => {
    await db?.drop();
  });

  const boot = async (data: ReturnType<typeof DataSkillsModule.forRoot>) => {
    const app = await Test.createTestingModule({
      imports: [
        // No retry: a boot this spec makes fail must not leave a connection attempt running after it.
        TypeOrmModule.forRoot({ ...(await db.options()), retryAttempts: 0 }),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        data,
      ],
    }).compile();
    await app.init();
    return app;
  };

  it('forRootAsync takes its options from a factory with imports and inject; the defaults are merged once, field by field', async () => {
    const app = await boot(
      DataSkillsModule.forRootAsync({
        imports: [DeskConfigModule],
        inject: [DeskConfig],
        useFactory: (config: DeskConfig): DataSkillsModuleOptions => ({
          entities: ENTITIES,
          dbQueryTenantColumn: 'tenant_id',
          kpis: config.metrics,
          limits: { defaultRows: config.defaultRows, maxRows: undefined },
          fence: { mode: 'off' },
        }),
      }),
    );
    try {
      const options = app.get<DataSkillsOptions>(DATA_SKILLS_OPTIONS);
      expect(options).toBeInstanceOf(DataSkillsOptions);
      expect(options.limits).toEqual({ timeoutMs: 5_000, defaultRows: 3, maxRows: 100, maxBytes: 256 * 1024, maxConcurrentPerTenant: 2 });
      expect(options.fence).toEqual({ mode: 'off', role: 'zmodu_reader' });
      expect(options.writePermission).toBe('entity:write');
      // No reports: report.generate has nothing to serve and is not registered.
      expect(
        app
          .get(SkillRegistry)
          .list()
          .map((s) => s.name)
          .sort(),
      ).toEqual(['db.query', 'entity.list', 'entity.lookup', 'kpi.query']);
      const ctx = createSkillContext({ guard: new Guard({ allow: ['entity.list', 'kpi.query'] }), tenantId: ALPHA, agent: 'test' });
      const listed = await app.get(SkillDispatcher).dispatch(ctx, 'entity.list', { entity: 'order' });
      expect(listed.value).toMatchObject({ rowCount: 3, truncated: true }); // the factory's defaultRows
      const kpi = await app.get(SkillDispatcher).dispatch(ctx, 'kpi.query', { metric: 'open_orders' });
      expect(kpi.value).toEqual({ metric: 'open_orders', value: '4' });
      expect(app.get(getDataSourceToken())).toBeInstanceOf(DataSource);
    } finally {
      await app.close();
    }
  });

  it('BusinessSkillsModule.register is the deprecated name of DataSkillsModule.forRoot', async () => {
    const options = { entities: ENTITIES, fence: { mode: 'off' as const } };
    const alias = BusinessSkillsModule.register(options);
    expect(alias.module).toBe(DataSkillsModule);
    expect(alias.providers).toEqual(DataSkillsModule.forRoot(options).providers);
  });

  it('wrong options fail boot with a typed exception that says what to do', async () => {
    const cases: Array<[DataSkillsModuleOptions, new (...a: never[]) => Error, RegExp]> = [
      [{ entities: ENTITIES, limits: 'fast' as never }, InvalidDataOptionsException, /limits must be an object \{ timeoutMs/],
      [
        { entities: ENTITIES, limits: { maxRows: 1000 } },
        InvalidDataOptionsException,
        /limits\.maxRows must be a whole number of rows, at most 100/,
      ],
      [
        { entities: ENTITIES, fence: { mode: 'sometimes' as never } },
        InvalidDataOptionsException,
        /fence\.mode must be 'auto', 'required' or 'off'/,
      ],
      [{ entities: [...ENTITIES, ENTITIES[0]] }, InvalidDataOptionsException, /two entities are named 'order': give each its own name/],
      [{ entities: [{ name: 'x', table: 'x;drop', pk: 'id' }] }, InvalidIdentifierException, /Invalid table "x;drop"/],
      [{ entities: ENTITIES, kpis: [{ name: 'k', tenantSql: 'SELECT 1' }] }, InvalidIdentifierException, /exactly one tenant bind/],
    ];
    for (const [options, type, message] of cases) {
      const failed = await boot(DataSkillsModule.forRoot({ ...options, fence: options.fence ?? { mode: 'off' } })).then(
        (app) => app.close().then(() => null),
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(type);
      expect((failed as Error).message).toMatch(message);
    }
  });
});
