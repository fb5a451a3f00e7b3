import { Module } from '@nestjs/common';
import { BusinessSkills } from './business-skills';
import { ConfigurableDataSkillsModule, DATA_SKILLS_MODULE_OPTIONS, DATA_SKILLS_OPTIONS } from './data-skills.module-definition';
import { DataSkillsModuleOptions, resolveDataSkillsOptions } from './data-skills.options';

/**
 * The data skills: db.query, entity.lookup, entity.list, kpi.query, report.generate (read), and
 * entity.create / entity.update when named in `skills`. A skill with nothing to serve (kpi.query
 * without metrics, report.generate without reports) is not registered. Needs SkillsModule
 * (AgentModule imports it) and a TypeORM DataSource (the application's, or `dataSource`).
 *
 * @example
 * DataSkillsModule.forRoot({
 *   entities: [{ name: 'order', table: 'orders', pk: 'id', tenantColumn: 'tenant_id' }],
 *   dbQueryTenantColumn: 'tenant_id',
 * })
 * DataSkillsModule.forRootAsync({
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ entities: ENTITIES, limits: { timeoutMs: config.get('DB_QUERY_TIMEOUT_MS') } }),
 * })
 */
@Module({
  providers: [
    // The one place the defaults are merged: everything else injects DATA_SKILLS_OPTIONS.
    {
      provide: DATA_SKILLS_OPTIONS,
      inject: [DATA_SKILLS_MODULE_OPTIONS],
      useFactory: (raw: DataSkillsModuleOptions) => resolveDataSkillsOptions(raw),
    },
    BusinessSkills,
  ],
  exports: [BusinessSkills, DATA_SKILLS_OPTIONS],
})
export class DataSkillsModule extends ConfigurableDataSkillsModule {}
