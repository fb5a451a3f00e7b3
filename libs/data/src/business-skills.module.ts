import { DynamicModule } from '@nestjs/common';
import { DataSkillsModule } from './data-skills.module';
import { DATA_SKILLS_ASYNC_OPTIONS_TYPE } from './data-skills.module-definition';
import { DataSkillsModuleOptions } from './data-skills.options';

/** @deprecated Use DataSkillsModule: `BusinessSkillsModule.register(o)` is `DataSkillsModule.forRoot(o)`. */
export class BusinessSkillsModule {
  /** @deprecated Use DataSkillsModule.forRoot(options). */
  static register(options: DataSkillsModuleOptions): DynamicModule {
    return DataSkillsModule.forRoot(options);
  }

  /** @deprecated Use DataSkillsModule.forRootAsync(options). */
  static registerAsync(options: typeof DATA_SKILLS_ASYNC_OPTIONS_TYPE): DynamicModule {
    return DataSkillsModule.forRootAsync(options);
  }
}
