// The public API of @zmodu/http: the HTTP edge (the exception filter, the caller contract, the agent runs controller).
export { ZmoduHttpModule } from './zmodu-http.module';
export type { ZmoduHttpModuleAsyncOptions, ZmoduHttpModuleForRootOptions } from './zmodu-http.module-definition';
export { ZmoduHttpModuleOptions, resolveHttpOptions } from './zmodu-http.options';
export type { ExceptionFilterOptions, ResolvedHttpOptions, ZmoduHttpModuleExtras } from './zmodu-http.options';
export { ZMODU_HTTP_OPTIONS } from './http.constants';
// The exception filter and its mapping.
export { ZmoduExceptionFilter } from './errors/zmodu-exception.filter';
export { DEFAULT_RETRY_AFTER_SECONDS, httpAnswer } from './errors/http-answer';
export type { HttpAnswer } from './errors/http-answer';
export { LIBRARY_HTTP_ERRORS, libraryErrorMapping } from './errors/library-errors';
export type { HttpErrorMapping } from './errors/library-errors';
// The caller contract.
export { callerFromRequestUser, checkCaller } from './caller/http-caller';
export type { HttpCaller, HttpCallerContext } from './caller/http-caller';
export { CallerContext, callerContextOf, HttpCallerGuard, RequireCaller } from './caller/http-caller.guard';
// The runs controller and its parts, for a controller of your own.
export { AgentRunsController } from './runs/agent-runs.controller';
export { goalProblem, isJsonContentType, JsonGoalBody, RunGoalPipe, textProblem } from './runs/goal-body.pipe';
export type { RunGoalBody } from './runs/goal-body.pipe';
export { acceptsEventStream, MAX_QUEUED_STREAM_BYTES, streamRun } from './runs/run-event-stream';
export type { StreamErrorBody } from './runs/run-event-stream';
export { quotaOutageBody, refuseUnreadableQuota } from './runs/quota-outage';
export { InvalidHttpOptionsException } from './exceptions/invalid-http-options.exception';
export { CallerContextMissingException } from './exceptions/caller-context-missing.exception';
