import { ConfigurableModuleBuilder } from '@nestjs/common';
import { MemoryModuleOptions } from './memory.options';

export const {
  ConfigurableModuleClass: ConfigurableMemoryModule,
  MODULE_OPTIONS_TOKEN: MEMORY_MODULE_OPTIONS,
  ASYNC_OPTIONS_TYPE: MEMORY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<MemoryModuleOptions>({ moduleName: 'ZmoduMemory' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** What `MemoryModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`. */
export type MemoryModuleAsyncOptions = typeof MEMORY_ASYNC_OPTIONS_TYPE;
