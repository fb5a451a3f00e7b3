import { ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ADMIN_PUBLIC_ROUTE } from '@zmodu/admin';
import { IS_PUBLIC, REQUIRED_PERMISSIONS } from './auth.constants';

/** The caller's token must carry every one of these permission codes, or the request is answered 403. */
export const RequirePermission = (...permissions: string[]) => {
  if (permissions.length === 0 || permissions.some((p) => typeof p !== 'string' || p === ''))
    throw new TypeError('@RequirePermission needs one or more non-empty permission codes.');
  return SetMetadata(REQUIRED_PERMISSIONS, permissions);
};

/** No bearer token needed (health checks). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/**
 * Whether the route needs no caller: @Public() routes, and the approvals console's own files and settings (ADMIN_PUBLIC_ROUTE
 * of @zmodu/admin; its data comes from the admin API with the signed-in user's token).
 */
export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return (
    reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]) === true ||
    reflector.get<boolean>(ADMIN_PUBLIC_ROUTE, context.getHandler()) === true
  );
}
