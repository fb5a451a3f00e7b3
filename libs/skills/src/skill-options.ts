import { ActionClass } from '@zmodu/guard';
import { JsonSchema } from './json-schema';
import { StandardParameters } from './standard-schema';
import type { DtoClass } from './dto-parameters';

/**
 * A skill's arguments: a JSON Schema of an object, a Standard Schema of one (zod 4.2+, or any library that gives its
 * JSON Schema through Standard JSON Schema: the handler's argument is the schema's output, typed), or a DTO class of
 * class-validator (the handler's argument is its instance).
 */
export type SkillParameters = JsonSchema | StandardParameters | DtoClass;

/** What `@Skill(...)`, `defineSkill(...)` and `SkillRegistry.register(...)` take. */
export interface SkillOptions<P extends SkillParameters = SkillParameters> {
  /** Dotted lower-case name the model and the policy use, e.g. `order.draft`. */
  readonly name: string;
  /** `read`, `propose` or `execute`. Undeclared: `execute` (the strictest). */
  readonly action?: ActionClass;
  /** What the skill does, for the model. */
  readonly description: string;
  /**
   * The arguments object: a JSON Schema, a Standard Schema (e.g. `z.object({...})` of zod 4.2+), or a class-validator
   * DTO class. A Standard Schema or a DTO is checked twice per call: against the JSON Schema it gives (what the model
   * and MCP see; a DTO's is made from its decorators), then by its own validation, whose output (defaults and
   * transforms; a DTO's instance) is what the handler receives. Default: no arguments.
   */
  readonly parameters?: P;
  /** Permission code the caller must hold (`ctx.permissions`). */
  readonly requiredPermission?: string;
  /** Deadline of one call in ms. Default 30000. */
  readonly timeoutMs?: number;
  /** A tenant-scoped skill refuses a call without a tenant. Default true (fail closed). */
  readonly tenantScoped?: boolean;
  /** Tokens a call is charged against the guard budget before it runs. Default: estimated from the arguments. */
  readonly cost?: number;
  /**
   * A staged action (an `execute` skill): only the proposal pipeline runs it, after risk review
   * and, when needed, human approval, with a transaction to write through (`ctx.staged`). A direct
   * call from a model, the CLI or MCP is refused as `denied_staged`, whatever the allow list says.
   * Propose it with `approval.submit` (list it in the pipeline's `proposable`). Default false.
   */
  readonly staged?: boolean;
  /**
   * A call made again in the same run (`ctx.runId`) with the same arguments has no further effect and answers as the
   * first did (the skill keys its effect by the run, as approval.submit and command.execute do). A run that the worker
   * retries after its process died dispatches such a call again when the first one's outcome was not written; any other
   * skill's call is not repeated, and the model is told its outcome is unknown. Default: true for a `read`, else false.
   */
  readonly idempotent?: boolean;
  /**
   * What the audit entry keeps of the call's arguments and of its result (the handler's value; an error body is always
   * kept): `'full'` (the default), the shown copy (`x-sensitive` fields masked, secrets redacted), or `'digest'`,
   * `{"chars":…,"digest":true,"sha256":…}` of that copy, for a skill whose arguments or results carry content that must
   * not outlive its store (memory notes that an erase deletes). Only the audit: the caller and the model still get the
   * result, and spans never hold either.
   */
  readonly audit?: SkillAuditOptions;
}

/** What an audit entry keeps of a payload: the shown copy, or its digest. */
export type SkillAuditMode = 'full' | 'digest';

/** See `SkillOptions.audit`. */
export interface SkillAuditOptions {
  readonly args?: SkillAuditMode;
  readonly result?: SkillAuditMode;
}

export const SKILL_NAME_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;
export const SKILL_NAME_MAX_LENGTH = 64;
export const DEFAULT_SKILL_TIMEOUT_MS = 30_000;
export const MAX_SKILL_TIMEOUT_MS = 15 * 60_000;
