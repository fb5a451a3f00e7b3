import { ConfigurableModuleBuilder } from '@nestjs/common';
import { GuardModule, GuardModuleOptions } from '@zmodu/guard';
import { SkillsModule } from '@zmodu/skills';
import { AgentModuleOptions } from './agent-module.options';

export const {
  ConfigurableModuleClass: ConfigurableAgentModule,
  MODULE_OPTIONS_TOKEN: AGENT_MODULE_OPTIONS,
  OPTIONS_TYPE: AGENT_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: AGENT_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<AgentModuleOptions>({ moduleName: 'ZmoduAgent' })
  .setClassMethodName('forRoot')
  .setExtras(
    {
      isGlobal: true,
      /** Where the audit log and token counters live (default: the app's TypeORM DataSource). */
      guard: {} as GuardModuleOptions,
    },
    (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
      imports: [...(definition.imports ?? []), GuardModule.forRoot({ ...(extras.guard ?? {}), isGlobal: true }), SkillsModule.forRoot()],
    }),
  )
  .build();
