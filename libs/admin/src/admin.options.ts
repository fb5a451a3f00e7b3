import { ownOptions } from '@zmodu/guard';
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
  /** Serve the audit endpoints (GET /admin/audit/verify; needs GuardModule). Default false. */
  audit?: boolean;
  /** Serve the config endpoints (GET /admin/config, PUT /admin/config/:key; needs AdminSkillsModule). Default false. */
  config?: boolean;
}

/** The options after the defaults are merged (what the admin guard and controllers inject). */
export type ResolvedAdminOptions = Required<AdminModuleOptions>;

/** The permission option an admin endpoint requires (see `@RequireAdminPermission`). */
export type AdminPermissionOption = 'decidePermission' | 'outboxPermission' | 'auditPermission' | 'configPermission';

/** Merge the given options over the defaults, once; a field given as `undefined` keeps its default. */
export function resolveAdminOptions(raw: Partial<AdminModuleOptions> | undefined): ResolvedAdminOptions {
  const given = ownOptions(raw);
  return Object.assign(new AdminModuleOptions(), given) as ResolvedAdminOptions;
}
