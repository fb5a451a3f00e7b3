import { ConfigurableModuleBuilder } from '@nestjs/common';
import { OutboxModuleOptions } from './outbox.options';

export const {
  ConfigurableModuleClass: ConfigurableOutboxModule,
  MODULE_OPTIONS_TOKEN: OUTBOX_MODULE_OPTIONS,
  ASYNC_OPTIONS_TYPE: OUTBOX_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OutboxModuleOptions>({ moduleName: 'ZmoduOutbox' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What `OutboxModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`. */
export type OutboxModuleAsyncOptions = typeof OUTBOX_ASYNC_OPTIONS_TYPE;
