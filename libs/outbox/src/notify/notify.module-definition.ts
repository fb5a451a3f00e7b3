import { ConfigurableModuleBuilder } from '@nestjs/common';
import { NotifyModuleOptions } from './notify.options';

export const {
  ConfigurableModuleClass: ConfigurableNotifyModule,
  MODULE_OPTIONS_TOKEN: NOTIFY_MODULE_OPTIONS,
  ASYNC_OPTIONS_TYPE: NOTIFY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<NotifyModuleOptions>({ moduleName: 'ZmoduNotify' }).setClassMethodName('forRoot').build();

/** What `NotifyModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`. */
export type NotifyModuleAsyncOptions = typeof NOTIFY_ASYNC_OPTIONS_TYPE;
