import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ADMIN_CALLER, ADMIN_OPTIONS, ADMIN_PERMISSION } from './admin.constants';
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
    const caller = this.options.resolveCaller(req);
    if (!isCaller(caller)) throw new UnauthorizedException('No authenticated caller with a tenant: send a bearer token.');
    if (!caller.permissions.includes(permission)) throw new ForbiddenException(`Missing permission: ${permission}.`);
    req[ADMIN_CALLER] = caller;
    return true;
  }
}

function isCaller(caller: AdminCaller | undefined): caller is AdminCaller {
  return (
    !!caller &&
    typeof caller.tenantId === 'string' &&
    caller.tenantId !== '' &&
    typeof caller.userId === 'string' &&
    Array.isArray(caller.permissions)
  );
}
