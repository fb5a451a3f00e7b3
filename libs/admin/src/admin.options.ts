/** The caller of an admin endpoint. */
export interface AdminCaller {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

export class AdminModuleOptions {
  /**
   * How to find the authenticated caller of a request. Default: `request.user` with
   * `{ tenantId, userId, permissions }` (what an auth guard usually sets).
   */
  resolveCaller?: (request: unknown) => AdminCaller | undefined;
  /** The permission the approval endpoints require. Default 'approval:decide'. */
  decidePermission?: string = 'approval:decide';
  /** Serve the approval queue (needs PipelineModule). Default true. */
  approvals?: boolean = true;
  /** Serve the outbox endpoints (needs OutboxModule). Default false. */
  outbox?: boolean = false;
  /** The permission the outbox endpoints require. Default 'admin:outbox'. */
  outboxPermission?: string = 'admin:outbox';
}

export const ADMIN_MODULE_OPTIONS = Symbol('zmodu:ADMIN_MODULE_OPTIONS');
