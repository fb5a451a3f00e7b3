/** CLS key of the authenticated caller. */
export const CLS_CALLER = 'zmodu.caller';
/** Metadata key of @RequirePermission. */
export const REQUIRED_PERMISSIONS = 'zmodu:required-permissions';
/** Metadata key of @Public. */
export const IS_PUBLIC = 'zmodu:public';

/** The permission codes of the sample, and what they open. */
export const PERMISSIONS = {
  agentRun: 'agent:run',
  agentRead: 'agent:read',
  marketRead: 'market:read',
  orderDraft: 'order:draft',
  orderSubmit: 'order:submit',
  deskLead: 'desk:lead',
  approvalDecide: 'approval:decide',
  commandExecute: 'command:execute',
  adminOutbox: 'admin:outbox',
  /** GET /admin/audit/verify: the audit hash chain of the caller's tenant. */
  adminAudit: 'admin:audit',
  /** GET /admin/agents: every agent's policy, auditPolicy report and counters (this instance's, across tenants). */
  adminAgents: 'admin:agents',
  /** GET /admin/quota: the token usage of the caller's tenant per agent. */
  adminQuota: 'admin:quota',
  /** GET /admin/skills (and /openapi.json): the skill catalog the caller may see. */
  adminSkills: 'admin:skills',
  /** admin.config.get / admin.config.set and GET /admin/config, PUT /admin/config/:key. */
  adminConfig: 'admin:config',
  /** admin.cache.invalidate / admin.cache.clear. */
  adminCache: 'admin:cache',
  /** GET /metrics with a JWT: the caller's tenant's series only (every series needs the metrics token). */
  adminMetrics: 'admin:metrics',
  /** memory.remember: store a note about the caller (their own memory, in their tenant). */
  memoryWrite: 'memory:write',
  /** list_schedulable_tasks and list_jobs: read the tenant's scheduled jobs. */
  jobRead: 'job:read',
  /** schedule_job and cancel_job: create or cancel a scheduled job of the tenant (it runs with the creator's permissions). */
  jobSchedule: 'job:schedule',
} as const;

export const ALL_PERMISSIONS: string[] = Object.values(PERMISSIONS);

export interface Caller {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
  /** The token's "aud" claim, when it has one: who it was issued for (McpModule's authorization checks it). */
  readonly audience?: readonly string[];
}
