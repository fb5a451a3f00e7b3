/**
 * Who is calling over MCP: the tenant, the user and the permission codes the application's own
 * authentication established for this request. Tools are listed and called under it.
 */
export interface McpPrincipal {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

/** A principal with both ids non-empty strings and permissions an array of strings, frozen; null for anything else. */
export function toPrincipal(value: unknown): McpPrincipal | null {
  if (value === null || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const tenantId = Object.hasOwn(v, 'tenantId') ? v.tenantId : undefined;
  const userId = Object.hasOwn(v, 'userId') ? v.userId : undefined;
  const permissions = Object.hasOwn(v, 'permissions') ? v.permissions : [];
  if (typeof tenantId !== 'string' || tenantId === '' || typeof userId !== 'string' || userId === '') return null;
  if (!Array.isArray(permissions) || permissions.some((p) => typeof p !== 'string')) return null;
  return Object.freeze({ tenantId, userId, permissions: Object.freeze([...(permissions as string[])]) });
}

/** The key a session is bound to: tenant and user (permissions may change from one request to the next). */
export function principalKey(principal: McpPrincipal): string {
  return JSON.stringify([principal.tenantId, principal.userId]);
}
