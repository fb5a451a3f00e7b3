import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { DataSkillsModuleOptions } from './data-skills.options';

export const {
  ConfigurableModuleClass: ConfigurableDataSkillsModule,
  MODULE_OPTIONS_TOKEN: DATA_SKILLS_MODULE_OPTIONS,
  OPTIONS_TYPE: DATA_SKILLS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: DATA_SKILLS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<DataSkillsModuleOptions>({ moduleName: 'ZmoduDataSkills' }).setClassMethodName('forRoot').build();

/**
 * The data skills' options after defaults (a `DataSkillsOptions`), merged once by DataSkillsModule.
 * Inject it with `@InjectDataSkillsOptions()`; DATA_SKILLS_MODULE_OPTIONS holds the options as given.
 */
export const DATA_SKILLS_OPTIONS = Symbol('ZMODU_DATA_SKILLS_OPTIONS');

/** Injects DATA_SKILLS_OPTIONS (the resolved DataSkillsOptions). */
export const InjectDataSkillsOptions = (): ParameterDecorator => Inject(DATA_SKILLS_OPTIONS);

/** @deprecated Use DATA_SKILLS_OPTIONS (the options after defaults) or DATA_SKILLS_MODULE_OPTIONS (as given). */
export const BUSINESS_SKILLS_OPTIONS = DATA_SKILLS_MODULE_OPTIONS;
