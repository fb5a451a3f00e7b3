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
} as const;

export const ALL_PERMISSIONS: string[] = Object.values(PERMISSIONS);

export interface Caller {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}
