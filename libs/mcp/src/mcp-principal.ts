import { scopeIdProblem } from '@zmodu/core';

/**
 * Who is calling over MCP: the tenant, the user and the permission codes the application's own
 * authentication established for this request. Tools are listed and called under it.
 */
export interface McpPrincipal {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
  /**
   * The audience of the token the application verified (its `aud` claim: who it was issued for). McpModule's
   * `authorization` accepts a request only when it names the endpoint's resource; without `authorization` it is unused.
   */
  readonly audience?: readonly string[];
}

/** The caller of one request: a principal, or why there is none (the message of the 401). */
export type McpCaller =
  { readonly principal: McpPrincipal; readonly problem: null } | { readonly principal: null; readonly problem: string };

/**
 * Reads a principal: own `tenantId` and `userId` that are ids under the rule of every door (scopeIdProblem of
 * @zmodu/guard: no control, format or invisible character, NFC, not '0', ...) and `permissions` an array of strings;
 * the principal frozen, or the problem (which never repeats an id). Nothing (null, not an object) is no caller.
 */
export function readPrincipal(value: unknown): McpCaller {
  if (value === null || typeof value !== 'object') return { principal: null, problem: 'no authenticated caller' };
  const v = value as Record<string, unknown>;
  const tenantId = Object.hasOwn(v, 'tenantId') ? v.tenantId : undefined;
  const userId = Object.hasOwn(v, 'userId') ? v.userId : undefined;
  const permissions = Object.hasOwn(v, 'permissions') ? v.permissions : [];
  const problem = scopeIdProblem("the caller's tenantId", tenantId) ?? scopeIdProblem("the caller's userId", userId);
  if (problem) return { principal: null, problem };
  if (!Array.isArray(permissions) || permissions.some((p) => typeof p !== 'string'))
    return { principal: null, problem: "the caller's permissions are not an array of strings" };
  const audience = Object.hasOwn(v, 'audience') ? v.audience : undefined;
  if (audience !== undefined && typeof audience !== 'string' && !(Array.isArray(audience) && audience.every((a) => typeof a === 'string')))
    return { principal: null, problem: "the caller's audience is not a string or an array of strings" };
  return {
    principal: Object.freeze({
      tenantId: tenantId as string,
      userId: userId as string,
      permissions: Object.freeze([...(permissions as string[])]),
      ...(audience !== undefined
        ? { audience: Object.freeze(typeof audience === 'string' ? [audience] : [...(audience as string[])]) }
        : {}),
    }),
    problem: null,
  };
}

/** A principal (see readPrincipal), frozen; null for anything else. */
export function toPrincipal(value: unknown): McpPrincipal | null {
  return readPrincipal(value).principal;
}

/** The key a session is bound to: tenant and user (permissions may change from one request to the next). */
export function principalKey(principal: McpPrincipal): string {
  return JSON.stringify([principal.tenantId, principal.userId]);
}
