// The public API of @zmodu/skills: the decorator, the registry and dispatcher, the context, schemas,
// the catalog export and the CSV writer of every export. Everything else in this folder is internal.
export { Skill } from './skill.decorator';
export { defineSkill } from './define-skill';
export type { SkillDefinition } from './define-skill';
export type { SkillArgs } from './standard-schema';
export type { SkillAuditOptions, SkillOptions, SkillParameters } from './skill-options';
export { SkillsModule } from './skills.module';
export { SkillRegistry } from './skill.registry';
export type { SkillSummary } from './skill.registry';
export { SkillDispatcher } from './skill.dispatcher';
export { zmoduPinoOptions } from './telemetry/pino-options';
export type { ZmoduPinoOptions } from './telemetry/pino-options';
export type { SkillCallResult } from './skill-result';
export { createSkillContext } from './skill-context';
export type { SkillContext, SkillContextInit, SkillInvocation } from './skill-context';
export { entityManagerOf } from './transaction';
export type { JsonSchema } from './json-schema';
export { toSkillsJson, toOpenApi } from './catalog-export';
export { SkillError } from './exceptions/skill.error';
export { UnknownSkillException } from './exceptions/unknown-skill.exception';
export type { SkillPermissions } from './skill-permissions';
export { zmoduLogContext } from './telemetry/log-context';
export { ZmoduError } from '@zmodu/core';
