// The public API of @zmodu/skills: the decorator, the registry and dispatcher, the context, schemas,
// the catalog export and the CSV writer of every export. Everything else in this folder is internal.
export { Skill } from './skill.decorator';
export type { SkillAuditMode, SkillAuditOptions, SkillOptions } from './skill-options';
export { SKILL_NAME_PATTERN, SKILL_NAME_MAX_LENGTH, DEFAULT_SKILL_TIMEOUT_MS, MAX_SKILL_TIMEOUT_MS } from './skill-options';
export { SkillsModule } from './skills.module';
export { SkillRegistry } from './skill.registry';
export { SkillExplorer } from './skill.explorer';
export type { SkillSummary } from './skill.registry';
export type { SkillHandler, SkillRegistration, RegisteredSkill } from './skill-definition';
export { SkillDispatcher } from './skill.dispatcher';
export { boundedName } from './caller-text';
export type { DispatchCall } from './telemetry/skill-tracing';
export { zmoduLogContext, withLogContext } from './telemetry/log-context';
export type { ZmoduLogContext } from './telemetry/log-context';
export { zmoduPinoOptions, ZMODU_LOG_REDACT_PATHS } from './telemetry/pino-options';
export type { ZmoduPinoOptions } from './telemetry/pino-options';
export type { SkillCallResult, SkillErrorBody } from './skill-result';
export { estimateTokens } from './skill-result';
export { createSkillContext, stagedExecution, isStagedExecution } from './skill-context';
export type { SkillContext, SkillContextInit, SkillInvocation, StagedExecution } from './skill-context';
export type { SkillTransaction } from './transaction';
export { entityManagerOf, transactionOf } from './transaction';
export { compileSchema, describeErrors, jsonDepth, jsonSchemaProblem, schemaProblem, EMPTY_PARAMETERS } from './json-schema';
export type { JsonSchema, ArgumentProblem } from './json-schema';
export { toSkillsJson, toOpenApi } from './catalog-export';
export { csvField, toCsv } from './csv';
export type { SkillsJsonEntry, OpenApiOptions } from './catalog-export';
export { SkillError } from './exceptions/skill.error';
export { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
export { DuplicateSkillException } from './exceptions/duplicate-skill.exception';
export { UnknownSkillException } from './exceptions/unknown-skill.exception';
export { InvalidSkillContextException } from './exceptions/invalid-context.exception';
export { MAX_PERMISSION_CODE_LENGTH, permissionCodeProblem, resolveSkillPermissions } from './skill-permissions';
export type { SkillPermissions } from './skill-permissions';
/** @internal The OpenTelemetry tracer of @zmodu/skills and @zmodu/agent (the API is an optional peer). */
export { lazyTracer, SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL, SPAN_STATUS_ERROR } from './telemetry/lazy-tracer';
export type { LazyTracer, TraceAttributes, TraceAttributeValue, TraceSpan } from './telemetry/lazy-tracer';
