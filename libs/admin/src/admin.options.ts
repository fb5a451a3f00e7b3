import { ownOptions } from '@zmodu/core';
import type { OpenApiOptions, SkillsJsonEntry } from '@zmodu/skills/internal';
import type { AdminConsoleOptions } from './console/console.options';
/** The caller of an admin endpoint. */
export interface AdminCaller {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

/** The default way to find the caller: `request.user` (what an auth guard usually sets). */
export const callerFromRequestUser = (request: unknown): AdminCaller | undefined => (request as { user?: AdminCaller } | null)?.user;

/** Options of `AdminModule.forRoot` / `forRootAsync` (the routes to serve are the module's extras: see AdminModuleExtras). */
export class AdminModuleOptions {
  /**
   * How to find the authenticated caller of a request. Default: `request.user` with
   * `{ tenantId, userId, permissions }` (what an auth guard usually sets).
   */
  resolveCaller?: (request: unknown) => AdminCaller | undefined = callerFromRequestUser;
  /** The permission the approval endpoints require. Default 'approval:decide'. */
  decidePermission?: string = 'approval:decide';
  /** The permission the outbox endpoints require. Default 'admin:outbox'. */
  outboxPermission?: string = 'admin:outbox';
  /** The permission the audit endpoints require. Default 'admin:audit'. */
  auditPermission?: string = 'admin:audit';
  /** The permission of GET /admin/agents (extras `agents: true`). Default 'admin:agents'. */
  agentsPermission?: string = 'admin:agents';
  /** The permission of GET /admin/quota (extras `quota: true`). Default 'admin:quota'. */
  quotaPermission?: string = 'admin:quota';
  /** The permission of GET /admin/skills and GET /admin/skills/openapi.json (extras `skills: true`). Default 'admin:skills'. */
  skillsPermission?: string = 'admin:skills';
  /**
   * Which skills a caller may see in GET /admin/skills, beyond the permission check (a skill whose `requiredPermission`
   * the caller lacks is never listed): e.g. the skills of the caller's tenant's plan. Default: every skill.
   */
  skillVisible?: (skill: SkillsJsonEntry, caller: AdminCaller) => boolean = () => true;
  /** Title, version, base path and server URL of GET /admin/skills/openapi.json (see toOpenApi). Default: toOpenApi's. */
  skillsOpenApi?: OpenApiOptions = {};
  /** The permission the config endpoints require (GET /admin/config, PUT /admin/config/:key). Default 'admin:config'. */
  configPermission?: string = 'admin:config';
}

/**
 * Which endpoints AdminModule serves. They decide the module's controllers, so they are given
 * beside the options, also to `forRootAsync({ outbox: true, useFactory })`, never by its factory.
 */
export interface AdminModuleExtras {
  /** Serve the approval queue (needs PipelineModule). Default true. */
  approvals?: boolean;
  /** Serve the outbox endpoints (needs OutboxModule). Default false. */
  outbox?: boolean;
  /** Serve the audit endpoints (GET /admin/audit: filters, pages, JSON or CSV; GET /admin/audit/verify; needs GuardModule). Default false. */
  audit?: boolean;
  /** Serve GET /admin/agents: each agent's policy, auditPolicy report and counters (needs AgentModule). Default false. */
  agents?: boolean;
  /** Serve GET /admin/quota: the caller's tenant's token usage per agent (needs GuardModule). Default false. */
  quota?: boolean;
  /** Serve GET /admin/skills and GET /admin/skills/openapi.json: the catalog the caller may see. Default false. */
  skills?: boolean;
  /** Serve the config endpoints (GET /admin/config, PUT /admin/config/:key; needs AdminSkillsModule). Default false. */
  config?: boolean;
  /**
   * Serve the approvals console, a web page for the people who decide, at /admin/console (true, or its options: title,
   * loginUrl, pollIntervalMs, root). Its pages are public; everything they show comes from the admin API with the
   * signed-in user's token. Default false.
   */
  console?: boolean | AdminConsoleOptions;
}

/** The options after the defaults are merged (what the admin guard and controllers inject). */
export type ResolvedAdminOptions = Required<AdminModuleOptions>;

/** The permission option an admin endpoint requires (see `@RequireAdminPermission`). */
export type AdminPermissionOption =
  | 'decidePermission'
  | 'outboxPermission'
  | 'auditPermission'
  | 'agentsPermission'
  | 'quotaPermission'
  | 'skillsPermission'
  | 'configPermission';

/** Merge the given options over the defaults, once; a field given as `undefined` keeps its default. */
export function resolveAdminOptions(raw: Partial<AdminModuleOptions> | undefined): ResolvedAdminOptions {
  const given = ownOptions(raw);
  return Object.assign(new AdminModuleOptions(), given) as ResolvedAdminOptions;
}
