import { ConfigurableModuleBuilder } from '@nestjs/common';
import { BusinessSkillsOptions } from './business-skills.options';

export const { ConfigurableModuleClass: ConfigurableBusinessSkillsModule, MODULE_OPTIONS_TOKEN: BUSINESS_SKILLS_OPTIONS } =
  new ConfigurableModuleBuilder<BusinessSkillsOptions>({ moduleName: 'ZmoduBusinessSkills' }).setClassMethodName('register').build();
