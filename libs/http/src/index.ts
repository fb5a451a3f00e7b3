// The public API of @zmodu/http: the HTTP edge (the exception filter, the caller contract, the agent runs controller).
export { ZmoduHttpModule } from './zmodu-http.module';
export type { ZmoduHttpModuleAsyncOptions } from './zmodu-http.module-definition';
export { ZmoduHttpModuleOptions } from './zmodu-http.options';
export { ZmoduExceptionFilter } from './errors/zmodu-exception.filter';
export type { HttpCaller, HttpCallerContext } from './caller/http-caller';
export { CallerContext, RequireCaller } from './caller/http-caller.guard';
export { AgentRunsController } from './runs/agent-runs.controller';
export { ZmoduError } from '@zmodu/core';
