import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { defineSkill, SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import { ADMIN_SKILLS_OPTIONS } from './admin-skills.constants';
import { CALLBACK_MISSING_MESSAGE } from './admin-skills.messages';
import { AdminDelegatedCallback, AdminSkillPermissionKey, ResolvedAdminSkillsOptions } from './admin-skills.options';

const PARAMETERS = {
  type: 'object',
  properties: {
    operation: {
      type: 'string',
      pattern: '^[a-z][a-z0-9_]*$',
      maxLength: 64,
      description: 'What to do (the application decides which exist)',
    },
    target: { type: 'string', minLength: 1, maxLength: 256, description: 'Whom or what it is about' },
    details: { type: 'object', description: 'Further arguments' },
  },
  required: ['operation'],
  additionalProperties: false,
} as const;

interface DelegatedArgs {
  operation: string;
  target?: string;
  details?: Record<string, unknown>;
}

/**
 * admin.user.manage and admin.tenant.provision (execute; their effects are the application's, so they stay in the
 * strictest class): each hands the call to the application's callback, with the caller's tenant from the context.
 * Without a callback the skill refuses every call.
 */
@Injectable()
export class AdminDelegatedSkills implements OnModuleInit {
  constructor(
    @Inject(ADMIN_SKILLS_OPTIONS) private readonly options: ResolvedAdminSkillsOptions,
    private readonly registry: SkillRegistry,
  ) {}

  onModuleInit(): void {
    this.delegate(
      'admin.user.manage',
      'user',
      'onUserManage',
      "Manage a user of the caller's tenant through the application (e.g. invite, disable, set roles: operation names what).",
    );
    this.delegate(
      'admin.tenant.provision',
      'tenant',
      'onTenantProvision',
      'Provision or change a tenant through the application (operation names what; the application decides what the caller may do).',
    );
  }

  private delegate(name: string, permission: AdminSkillPermissionKey, option: 'onUserManage' | 'onTenantProvision', description: string) {
    const callback: AdminDelegatedCallback | undefined = this.options[option];
    this.registry.register(
      defineSkill({
        name,
        action: 'execute',
        source: 'AdminSkillsModule',
        requiredPermission: this.options.permissions[permission],
        description: callback ? description : `${description} Not available in this application.`,
        parameters: PARAMETERS,
        handler: async (args, ctx: SkillInvocation) => {
          if (!callback) throw new SkillError('callback_missing', CALLBACK_MISSING_MESSAGE(name, option), undefined, 'NotAvailable');
          const a: DelegatedArgs = args; // typed by PARAMETERS (as const): no cast
          const result = await callback(
            Object.freeze({
              skill: name,
              tenantId: ctx.tenantId as string,
              userId: ctx.userId ?? null,
              agent: ctx.agent ?? null,
              runId: ctx.runId,
              permissions: ctx.permissions,
              operation: a.operation,
              target: a.target ?? null,
              details: Object.freeze({ ...(a.details ?? {}) }),
              signal: ctx.signal,
            }),
          );
          return result === undefined ? { ok: true } : result;
        },
      }),
    );
  }
}
