import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ADMIN_CALLER } from './admin.constants';
import { AdminCaller } from './admin.options';
import { CallerNotCheckedException } from './exceptions/caller-not-checked.exception';

/** The caller AdminPermissionGuard checked (the endpoint needs `@RequireAdminPermission(...)`). */
export const CurrentCaller = createParamDecorator((_: unknown, context: ExecutionContext): AdminCaller => {
  const caller = context.switchToHttp().getRequest<Record<PropertyKey, unknown>>()[ADMIN_CALLER];
  // Only reachable when an endpoint reads the caller without @RequireAdminPermission: a bug, refused as an error.
  if (!caller) throw new CallerNotCheckedException();
  return caller as AdminCaller;
});
