import { DynamicModule, Module } from '@nestjs/common';
import { HttpCallerGuard } from './caller/http-caller.guard';
import { ZMODU_HTTP_OPTIONS } from './http.constants';
import { RunGoalPipe } from './runs/goal-body.pipe';
import { ConfigurableZmoduHttpModule, ZMODU_HTTP_MODULE_OPTIONS, ZmoduHttpModuleForRootOptions } from './zmodu-http.module-definition';
import { resolveHttpOptions, ZmoduHttpModuleOptions } from './zmodu-http.options';

/**
 * The HTTP edge of an application with agents: the caller contract (`resolveCaller`, HttpCallerGuard,
 * `@RequireCaller()`, `@CallerContext()`), and, as asked, the exception filter of every library exception
 * (`exceptionFilter: true`) and the agent runs controller (`runsController: true`). `forRoot(options)` or
 * `forRootAsync({ useFactory, inject, exceptionFilter?, runsController? })`. Global by default (`isGlobal: false` not).
 */
@Module({
  providers: [
    {
      provide: ZMODU_HTTP_OPTIONS,
      inject: [ZMODU_HTTP_MODULE_OPTIONS],
      useFactory: (raw: ZmoduHttpModuleOptions) => resolveHttpOptions(raw),
    },
    HttpCallerGuard,
    RunGoalPipe,
  ],
  exports: [ZMODU_HTTP_OPTIONS, HttpCallerGuard, RunGoalPipe],
})
export class ZmoduHttpModule extends ConfigurableZmoduHttpModule {
  /** The options may be left out: every one has a default. */
  static override forRoot(options: ZmoduHttpModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
