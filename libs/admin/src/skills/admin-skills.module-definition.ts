import { ConfigurableModuleBuilder } from '@nestjs/common';
import { AdminSkillsModuleOptions } from './admin-skills.options';

export const {
  ConfigurableModuleClass: ConfigurableAdminSkillsModule,
  MODULE_OPTIONS_TOKEN: ADMIN_SKILLS_MODULE_OPTIONS,
  OPTIONS_TYPE: ADMIN_SKILLS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ADMIN_SKILLS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<AdminSkillsModuleOptions>({ moduleName: 'ZmoduAdminSkills' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What `AdminSkillsModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`. */
export type AdminSkillsModuleAsyncOptions = typeof ADMIN_SKILLS_ASYNC_OPTIONS_TYPE;
/** What `AdminSkillsModule.forRoot` takes. */
export type AdminSkillsModuleForRootOptions = typeof ADMIN_SKILLS_OPTIONS_TYPE;
