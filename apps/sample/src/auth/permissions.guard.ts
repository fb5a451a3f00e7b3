import { CanActivate, ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ClsService } from 'nestjs-cls';
import { Caller, CLS_CALLER, REQUIRED_PERMISSIONS } from './auth.constants';
import { isPublicRoute } from './require-permission.decorator';

/** Enforces @RequirePermission against the caller in the request context: 403 naming what is missing. */
@Injectable()
export class PermissionsGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly cls: ClsService,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (isPublicRoute(this.reflector, context)) return true;
    const required = this.reflector.getAllAndMerge<string[]>(REQUIRED_PERMISSIONS, [context.getHandler(), context.getClass()]) ?? [];
    const caller = this.cls.get<Caller | undefined>(CLS_CALLER);
    if (!caller) throw new ForbiddenException('No authenticated caller in the request context.');
    const missing = required.filter((p) => !caller.permissions.includes(p));
    if (missing.length > 0) throw new ForbiddenException(`Missing permission: ${missing.join(', ')}. Ask for a token that carries it.`);
    return true;
  }
}
