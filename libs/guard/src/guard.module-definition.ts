import { ConfigurableModuleBuilder } from '@nestjs/common';
import { GuardModuleOptions } from './guard-module.options';

export const { ConfigurableModuleClass: ConfigurableGuardModule, MODULE_OPTIONS_TOKEN: GUARD_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<GuardModuleOptions>({ moduleName: 'ZmoduGuard' })
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();
