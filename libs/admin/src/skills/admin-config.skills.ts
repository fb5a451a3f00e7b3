import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { isDatabaseUnavailable } from '@zmodu/core';
import { defineSkill, SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import { AdminConfig } from '../config/admin-config.service';
import { MAX_CONFIG_KEY_LENGTH } from '../config/config-write';
import { ConfigKeyImmutableException } from '../config/exceptions/config-key-immutable.exception';
import { ConfigKeyUndeclaredException } from '../config/exceptions/config-key-undeclared.exception';
import { ConfigVersionConflictException } from '../config/exceptions/config-version-conflict.exception';
import { InvalidConfigValueException } from '../config/exceptions/invalid-config-value.exception';
import { ADMIN_SKILLS_OPTIONS } from './admin-skills.constants';
import { CONFIG_STORE_UNAVAILABLE_MESSAGE } from './admin-skills.messages';
import { ResolvedAdminSkillsOptions } from './admin-skills.options';

/** The SkillError reasons of the config skills (what `PUT /admin/config/:key` maps to status codes). */
export const CONFIG_SKILL_REASONS = {
  undeclared: 'config_key_undeclared',
  immutable: 'config_key_immutable',
  invalid: 'config_value_invalid',
  conflict: 'config_version_conflict',
  unavailable: 'config_store_unavailable',
} as const;

/** A config exception as the SkillError the caller sees (with what it needs to act: the current version, the problems). */
function skillErrorOf(err: unknown): unknown {
  if (err instanceof ConfigKeyUndeclaredException) return new SkillError(CONFIG_SKILL_REASONS.undeclared, err.message);
  if (err instanceof ConfigKeyImmutableException) return new SkillError(CONFIG_SKILL_REASONS.immutable, err.message);
  if (err instanceof InvalidConfigValueException)
    return new SkillError(CONFIG_SKILL_REASONS.invalid, err.message, { problems: [...err.problems] });
  if (err instanceof ConfigVersionConflictException)
    return new SkillError(CONFIG_SKILL_REASONS.conflict, err.message, {
      expectedVersion: err.expectedVersion,
      currentVersion: err.currentVersion,
    });
  // An outage, told as one (PUT /admin/config/:key answers 503), not as a failure of the skill.
  if (isDatabaseUnavailable(err)) return new SkillError(CONFIG_SKILL_REASONS.unavailable, CONFIG_STORE_UNAVAILABLE_MESSAGE);
  return err;
}

/** admin.config.get (read) and admin.config.set (execute): the declared keys of the caller's tenant. */
@Injectable()
export class AdminConfigSkills implements OnModuleInit {
  constructor(
    @Inject(ADMIN_SKILLS_OPTIONS) private readonly options: ResolvedAdminSkillsOptions,
    private readonly registry: SkillRegistry,
    private readonly config: AdminConfig,
  ) {}

  onModuleInit(): void {
    const key = { type: 'string', minLength: 1, maxLength: MAX_CONFIG_KEY_LENGTH, description: 'A declared config key' } as const;
    this.registry.register(
      defineSkill({
        name: 'admin.config.get',
        action: 'read',
        source: 'AdminSkillsModule',
        requiredPermission: this.options.permissions.config,
        description:
          "Read a declared config key of the caller's tenant (its value, version, type, and whether it may change); without a key, list every declared key.",
        parameters: { type: 'object', properties: { key }, additionalProperties: false } as const,
        handler: (args, ctx) => this.get(args, ctx),
      }),
    );
    this.registry.register(
      defineSkill({
        name: 'admin.config.set',
        action: 'execute',
        source: 'AdminSkillsModule',
        requiredPermission: this.options.permissions.config,
        description:
          "Change a mutable declared config key of the caller's tenant. The value must fit the key's type. Send expectedVersion (the version admin.config.get answered) so the change applies only to the value you read.",
        parameters: {
          type: 'object',
          properties: {
            key,
            value: { description: "The new value (JSON, of the key's type)" },
            expectedVersion: { type: 'integer', minimum: 0, description: 'The version read (0: the key has no stored value yet)' },
          },
          required: ['key', 'value'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.set(args, ctx),
      }),
    );
  }

  async get(args: { key?: string }, ctx: SkillInvocation) {
    const tenantId = ctx.tenantId as string;
    try {
      return args.key === undefined ? { keys: await this.config.list(tenantId) } : await this.config.get(tenantId, args.key);
    } catch (err) {
      throw skillErrorOf(err);
    }
  }

  async set(args: { key: string; value: unknown; expectedVersion?: number }, ctx: SkillInvocation) {
    try {
      return await this.config.set(ctx.tenantId as string, args.key, args.value, {
        expectedVersion: args.expectedVersion,
        updatedBy: ctx.userId ?? (ctx.agent ? `agent:${ctx.agent}` : null),
      });
    } catch (err) {
      throw skillErrorOf(err);
    }
  }
}
