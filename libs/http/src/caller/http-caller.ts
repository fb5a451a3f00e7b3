import { ForbiddenException, UnauthorizedException } from '@nestjs/common';
import { scopeIdProblem } from '@zmodu/core';
import { CALLER_SCOPE_MESSAGE, CALLER_TENANT_MESSAGE, NO_CALLER_MESSAGE } from '../http.messages';

/**
 * The caller of a request, as the skills see it: the tenant it acts in, the user, and the permission codes. It comes
 * from the application's authentication (`resolveCaller`, by default `request.user`), never from the request's body.
 */
export interface HttpCaller {
  readonly tenantId: string;
  readonly userId: string;
  readonly permissions: readonly string[];
}

/**
 * The skill context of a request: the caller and the request's run id. Spread it into `Agent.run(goal, context)` or
 * `createSkillContext({ guard, ...context })`: every call of the request runs under this tenant, user and permissions.
 */
export interface HttpCallerContext extends HttpCaller {
  readonly runId: string;
}

/** The longest permission list a caller may carry (more is refused: a caller is not a dump). */
const MAX_PERMISSIONS = 500;
const MAX_PERMISSION_LENGTH = 200;
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The default resolveCaller: `request.user` (what an authentication guard, passport's or yours, sets). */
export const callerFromRequestUser = (request: unknown): HttpCaller | undefined =>
  (request as { user?: HttpCaller } | null | undefined)?.user ?? undefined;

/**
 * The caller resolveCaller found, checked like input. Nothing (null, undefined, not an object) is a 401: nobody is
 * authenticated. An object without a usable tenant (missing, empty, not an id under scopeIdProblem's rule: a control,
 * format or invisible character, not NFC, '0', ...) is a 403: authenticated, but not in a tenant. So is a user id that
 * is no id, or permissions that are not an array of permission codes. The messages say which, never repeating a value.
 * Own properties only: a caller whose tenant is inherited from a prototype has none.
 */
export function checkCaller(value: unknown): HttpCaller {
  if (value === null || value === undefined || typeof value !== 'object') throw new UnauthorizedException(NO_CALLER_MESSAGE);
  const v = value as Record<string, unknown>;
  const own = (key: string) => (Object.hasOwn(v, key) ? v[key] : undefined);
  const tenantProblem = scopeIdProblem('tenantId', own('tenantId'));
  if (tenantProblem) throw new ForbiddenException(CALLER_TENANT_MESSAGE(tenantProblem));
  const userProblem = scopeIdProblem('userId', own('userId'));
  if (userProblem) throw new ForbiddenException(CALLER_SCOPE_MESSAGE(userProblem));
  const permissions = own('permissions') ?? [];
  if (
    !Array.isArray(permissions) ||
    permissions.length > MAX_PERMISSIONS ||
    permissions.some((p) => typeof p !== 'string' || p === '' || p.length > MAX_PERMISSION_LENGTH || CONTROL.test(p))
  )
    throw new ForbiddenException(
      CALLER_SCOPE_MESSAGE(
        `permissions must be an array of at most ${MAX_PERMISSIONS} codes of 1 to ${MAX_PERMISSION_LENGTH} characters without control characters`,
      ),
    );
  return Object.freeze({
    tenantId: own('tenantId') as string,
    userId: own('userId') as string,
    permissions: Object.freeze([...(permissions as string[])]),
  });
}
