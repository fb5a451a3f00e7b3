import { ConfigurableModuleBuilder } from '@nestjs/common';
import { GuardModuleOptions } from './guard-module.options';

export const {
  ConfigurableModuleClass: ConfigurableGuardModule,
  MODULE_OPTIONS_TOKEN: GUARD_MODULE_OPTIONS,
  OPTIONS_TYPE: GUARD_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: GUARD_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<GuardModuleOptions>({ moduleName: 'ZmoduGuard' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** @internal The guard's options merged with their defaults (GuardModuleOptions), once, for the module's providers. */
export const RESOLVED_GUARD_OPTIONS = Symbol('zmodu:guard-options');
