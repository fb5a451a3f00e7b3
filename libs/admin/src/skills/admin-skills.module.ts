import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AdminConfig } from '../config/admin-config.service';
import type { AdminConfigStore } from '../config/admin-config.store';
import { TypeOrmAdminConfigStore } from '../config/typeorm-admin-config.store';
import { AdminAuditSkills } from './admin-audit.skills';
import { AdminCacheSkills } from './admin-cache.skills';
import { AdminConfigSkills } from './admin-config.skills';
import { AdminDelegatedSkills } from './admin-delegated.skills';
import { ADMIN_CONFIG_STORE, ADMIN_SKILLS_OPTIONS } from './admin-skills.constants';
import {
  ADMIN_SKILLS_MODULE_OPTIONS,
  AdminSkillsModuleForRootOptions,
  ConfigurableAdminSkillsModule,
} from './admin-skills.module-definition';
import {
  ADMIN_CONFIG_STORE_CHOICE,
  AdminSkillsModuleOptions,
  resolveAdminSkillsOptions,
  ResolvedAdminSkillsOptions,
} from './admin-skills.options';
import { resolveStoreChoice } from '@zmodu/core';

/**
 * The admin skills, registered in the one SkillRegistry so that every call goes through SkillDispatcher.dispatch
 * (guard, permission, tenant, audit): admin.cache.invalidate / admin.cache.clear, admin.config.get / admin.config.set,
 * admin.audit.export, admin.user.manage / admin.tenant.provision. None is reachable unless an agent's (or MCP
 * session's) `guard.allow` names it. `forRoot({ caches, config, audit, onUserManage, onTenantProvision, permissions })`
 * or `forRootAsync({ useFactory, inject })`; global unless `isGlobal: false`. Needs SkillsModule (AgentModule imports it).
 */
@Module({
  providers: [
    {
      provide: ADMIN_SKILLS_OPTIONS,
      inject: [ADMIN_SKILLS_MODULE_OPTIONS],
      useFactory: (raw: AdminSkillsModuleOptions) => resolveAdminSkillsOptions(raw),
    },
    {
      provide: ADMIN_CONFIG_STORE,
      inject: [ADMIN_SKILLS_OPTIONS, { token: getDataSourceToken(), optional: true }],
      useFactory: (o: ResolvedAdminSkillsOptions, ds?: DataSource): AdminConfigStore =>
        resolveStoreChoice<AdminConfigStore, DataSource>({
          ...ADMIN_CONFIG_STORE_CHOICE,
          // No key declared: nothing can be read or written, so no table is needed either.
          choice: o.store === 'typeorm' && !ds && o.configKeys.size === 0 ? 'memory' : o.store,
          dataSource: ds,
          typeorm: (dataSource) => new TypeOrmAdminConfigStore(dataSource),
        }),
    },
    AdminConfig,
    AdminCacheSkills,
    AdminConfigSkills,
    AdminDelegatedSkills,
    AdminAuditSkills,
  ],
  exports: [ADMIN_CONFIG_STORE, AdminConfig],
})
export class AdminSkillsModule extends ConfigurableAdminSkillsModule {
  /** The options may be left out: every one has a default. */
  static override forRoot(options: AdminSkillsModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
