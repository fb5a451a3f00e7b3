// @zmodu/skills/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/skills and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { SKILL_NAME_PATTERN, SKILL_NAME_MAX_LENGTH, MAX_SKILL_TIMEOUT_MS } from './skill-options';
export { SkillExplorer } from './skill.explorer';
export type { SkillHandler, SkillRegistration } from './skill-definition';
export { boundedName } from './caller-text';
export { withLogContext } from './telemetry/log-context';
export { estimateTokens } from './skill-result';
export { stagedExecution } from './skill-context';
export type { SkillTransaction } from './transaction';
export { transactionOf } from './transaction';
export { compileSchema, describeErrors, jsonDepth, jsonSchemaProblem, schemaProblem, EMPTY_PARAMETERS } from './json-schema';
export { toCsv } from './csv';
export type { SkillsJsonEntry, OpenApiOptions } from './catalog-export';
export { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
export { DuplicateSkillException } from './exceptions/duplicate-skill.exception';
export { InvalidSkillContextException } from './exceptions/invalid-context.exception';
export { permissionCodeProblem, resolveSkillPermissions } from './skill-permissions';
export { lazyTracer, SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL, SPAN_STATUS_ERROR } from './telemetry/lazy-tracer';
export type { TraceAttributes, TraceSpan } from './telemetry/lazy-tracer';
