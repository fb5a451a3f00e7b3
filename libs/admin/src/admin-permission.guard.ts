import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { scopeIdProblem } from '@zmodu/core';
import { ADMIN_CALLER, ADMIN_OPTIONS, ADMIN_PERMISSION } from './admin.constants';
import { ADMIN_CALLER_ID_MESSAGE, NO_ADMIN_CALLER_MESSAGE } from './admin.messages';
import { AdminCaller, AdminPermissionOption, ResolvedAdminOptions } from './admin.options';

/**
 * The caller of an admin endpoint, holding the permission its `@RequireAdminPermission(...)` names:
 * 401 without an authenticated caller with a tenant, 403 without the permission. The checked caller
 * is put on the request for `@CurrentCaller()`.
 */
@Injectable()
export class AdminPermissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(ADMIN_OPTIONS) private readonly options: ResolvedAdminOptions,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const option = this.reflector.getAllAndOverride<AdminPermissionOption | undefined>(ADMIN_PERMISSION, [
      context.getHandler(),
      context.getClass(),
    ]);
    // Fail closed: an admin endpoint without a declared permission is a programming error, not an open door.
    if (!option) throw new ForbiddenException('This admin endpoint declares no permission.');
    const permission = this.options[option];
    const req = context.switchToHttp().getRequest<Record<PropertyKey, unknown>>();
    const caller = checkedCaller(this.options.resolveCaller(req));
    if (!caller.permissions.includes(permission)) throw new ForbiddenException(`Missing permission: ${permission}.`);
    req[ADMIN_CALLER] = caller;
    return true;
  }
}

/**
 * The caller as resolveCaller found it, checked: a tenant and a user that are ids under the rule of every door
 * (scopeIdProblem of @zmodu/guard: no control, format or invisible character, NFC, ...) and an array of permissions;
 * anything else is a 401 (saying which id, never repeating it).
 */
export function checkedCaller(caller: AdminCaller | undefined): AdminCaller {
  if (
    !caller ||
    typeof caller !== 'object' ||
    !Array.isArray(caller.permissions) ||
    typeof caller.tenantId !== 'string' ||
    caller.tenantId === ''
  )
    throw new UnauthorizedException(NO_ADMIN_CALLER_MESSAGE);
  const problem = scopeIdProblem('tenantId', caller.tenantId) ?? scopeIdProblem('userId', caller.userId);
  if (problem) throw new UnauthorizedException(ADMIN_CALLER_ID_MESSAGE(problem));
  return caller;
}
