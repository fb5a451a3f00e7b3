import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AgentAuditLog, AuditLogStore } from '@zmodu/guard';
import { AUDIT_QUERY_MAX_LIMIT } from '@zmodu/guard/internal';
import { defineSkill, SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import {
  AUDIT_EXPORT_DEFAULT_LIMIT,
  AUDIT_EXPORT_KINDS,
  AuditExportRequest,
  auditCsv,
  parseAuditExport,
  readAuditPage,
} from '../audit/audit-export';
import { AuditTenantForbiddenException } from '../exceptions/audit-tenant-forbidden.exception';
import { InvalidAuditFilterException } from '../exceptions/invalid-audit-filter.exception';
import { ADMIN_SKILLS_OPTIONS } from './admin-skills.constants';
import { ResolvedAdminSkillsOptions } from './admin-skills.options';

const TEXT = { type: 'string', minLength: 1, maxLength: 200 };

/**
 * admin.audit.export (read): the run audit with kind, tenant, skill, agent, run, user, decision, time, limit and cursor
 * filters, as JSON rows or CSV (the shared parser, paging and CSV of `audit/audit-export.ts`). The caller's tenant comes
 * from the context; naming another tenant is refused unless the caller holds `audit.allTenantsPermission`.
 */
@Injectable()
export class AdminAuditSkills implements OnModuleInit {
  constructor(
    @Inject(ADMIN_SKILLS_OPTIONS) private readonly options: ResolvedAdminSkillsOptions,
    private readonly registry: SkillRegistry,
    private readonly audit: AgentAuditLog,
  ) {}

  onModuleInit(): void {
    if (this.options.audit === false) return;
    this.registry.register(
      defineSkill({
        name: 'admin.audit.export',
        action: 'read',
        source: 'AdminSkillsModule',
        requiredPermission: this.options.permissions.audit,
        description:
          "Export the audit of tool calls of the caller's tenant, oldest first: filter by kind (how a call ended), skill, agent, run, user, decision and time; JSON rows or CSV; page with cursor.",
        parameters: {
          type: 'object',
          properties: {
            kind: { type: 'string', enum: [...AUDIT_EXPORT_KINDS], description: 'How the call ended' },
            tenant: { ...TEXT, description: "Your own tenant (the default); another tenant's only for a platform admin" },
            skill: TEXT,
            agent: TEXT,
            run: { ...TEXT, description: 'A run id' },
            user: TEXT,
            decision: { type: 'string', enum: ['allowed', 'denied'] },
            since: { ...TEXT, description: 'ISO 8601 date-time, inclusive' },
            until: { ...TEXT, description: 'ISO 8601 date-time, inclusive' },
            limit: {
              type: 'integer',
              minimum: 1,
              maximum: AUDIT_QUERY_MAX_LIMIT,
              description: `Rows, default ${AUDIT_EXPORT_DEFAULT_LIMIT}`,
            },
            cursor: { ...TEXT, description: 'The nextCursor of the page before' },
            format: { type: 'string', enum: ['json', 'csv'] },
          },
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.export(args, ctx),
      }),
    );
  }

  async export(args: AuditExportRequest, ctx: SkillInvocation) {
    const allTenants = this.options.audit ? this.options.audit.allTenantsPermission : undefined;
    let parsed: ReturnType<typeof parseAuditExport>;
    try {
      parsed = parseAuditExport(args, {
        tenantId: ctx.tenantId ?? null,
        allTenants: allTenants !== undefined && ctx.permissions.includes(allTenants),
      });
    } catch (err) {
      if (err instanceof InvalidAuditFilterException) throw new SkillError('audit_filter_invalid', err.message, { field: err.field });
      if (err instanceof AuditTenantForbiddenException) throw new SkillError('audit_other_tenant', err.message);
      throw err;
    }
    // Through the audit log, which writes what it still holds first: the export sees every call made before it.
    const store: Pick<AuditLogStore, 'query'> = { query: (filter) => this.audit.query(filter) };
    const page = await readAuditPage(store as AuditLogStore, parsed);
    return parsed.format === 'csv'
      ? { format: 'csv', rows: page.entries.length, csv: auditCsv(page.entries), nextCursor: page.nextCursor }
      : { format: 'json', rows: page.entries.length, entries: page.entries, nextCursor: page.nextCursor };
  }
}
