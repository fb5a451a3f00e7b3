import { ConfigurableModuleBuilder } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ZmoduExceptionFilter } from './errors/zmodu-exception.filter';
import { AgentRunsController } from './runs/agent-runs.controller';
import { ZmoduHttpModuleExtras, ZmoduHttpModuleOptions } from './zmodu-http.options';

const DEFAULT_EXTRAS: Required<ZmoduHttpModuleExtras> = { exceptionFilter: false, runsController: false, isGlobal: true };

export const {
  ConfigurableModuleClass: ConfigurableZmoduHttpModule,
  MODULE_OPTIONS_TOKEN: ZMODU_HTTP_MODULE_OPTIONS,
  OPTIONS_TYPE: ZMODU_HTTP_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ZMODU_HTTP_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ZmoduHttpModuleOptions>({ moduleName: 'ZmoduHttp' })
  .setClassMethodName('forRoot')
  // The routes and the global filter are decided when the module is built: beside the options, also with forRootAsync.
  .setExtras<ZmoduHttpModuleExtras>(DEFAULT_EXTRAS, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal !== false,
    controllers: [...(definition.controllers ?? []), ...(extras.runsController ? [AgentRunsController] : [])],
    providers: [
      ...(definition.providers ?? []),
      ...(extras.exceptionFilter ? [{ provide: APP_FILTER, useClass: ZmoduExceptionFilter }] : []),
    ],
  }))
  .build();

/** What `ZmoduHttpModule.forRoot` takes: the options and the extras (exceptionFilter, runsController, isGlobal). */
export type ZmoduHttpModuleForRootOptions = typeof ZMODU_HTTP_OPTIONS_TYPE;
/** What `ZmoduHttpModule.forRootAsync` takes: `useFactory` (with `inject` and `imports`), `useClass` or `useExisting`, and the extras. */
export type ZmoduHttpModuleAsyncOptions = typeof ZMODU_HTTP_ASYNC_OPTIONS_TYPE;
