import { Module } from '@nestjs/common';
import { BusinessSkills } from './business-skills';
import { ConfigurableBusinessSkillsModule } from './business-skills.module-definition';

/**
 * The read-only data and business skills: db.query, entity.lookup, entity.list, kpi.query,
 * report.generate. Needs SkillsModule (AgentModule imports it) and a TypeORM DataSource.
 *
 * @example
 * BusinessSkillsModule.register({
 *   entities: [{ name: 'order', table: 'orders', pk: 'id', tenantColumn: 'tenant_id' }],
 *   dbQueryTenantColumn: 'tenant_id',
 * })
 */
@Module({ providers: [BusinessSkills], exports: [BusinessSkills] })
export class BusinessSkillsModule extends ConfigurableBusinessSkillsModule {}
