import { ActionClass } from '@zmodu/guard';
import { ValidateFunction } from 'ajv';
import { JsonSchema } from './json-schema';
import { SkillInvocation } from './skill-context';
import { SkillAuditMode, SkillOptions, SkillParameters } from './skill-options';
import { StandardParameters } from './standard-schema';

export type SkillHandler = (args: Record<string, unknown>, ctx: SkillInvocation) => unknown;

export interface NormalizedSkillOptions {
  readonly name: string;
  readonly action: ActionClass;
  readonly description: string;
  /** The JSON Schema of the arguments (of a Standard Schema: the one it gives of its input). */
  readonly parameters: JsonSchema;
  /** The Standard Schema the arguments were declared with, if they were: its `validate` makes the handler's argument. */
  readonly standard?: StandardParameters;
  readonly requiredPermission?: string;
  readonly timeoutMs: number;
  readonly tenantScoped: boolean;
  readonly cost?: number;
  readonly staged: boolean;
  /** Whether a call made again in the same run with the same arguments has no further effect (see SkillOptions.idempotent). */
  readonly idempotent: boolean;
  /** What the audit keeps of the arguments and of the result (see SkillOptions.audit). */
  readonly audit: { readonly args: SkillAuditMode; readonly result: SkillAuditMode };
}

/** A dynamic skill for `SkillRegistry.register` (`defineSkill` makes one with its handler's argument typed). */
export interface SkillRegistration<P extends SkillParameters = SkillParameters> extends SkillOptions<P> {
  readonly handler: SkillHandler;
  /** Where it comes from, named in duplicate errors. Default 'SkillRegistry.register'. */
  readonly source?: string;
}

/** A skill as the registry holds it: declaration with defaults, handler, compiled argument validator. */
export interface RegisteredSkill extends NormalizedSkillOptions {
  readonly source: string;
  readonly handler: SkillHandler;
  readonly validate: ValidateFunction;
}
