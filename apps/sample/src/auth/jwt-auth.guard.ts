import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import { ClsService } from 'nestjs-cls';
import type { Request } from 'express';
import { Caller, CLS_CALLER, IS_PUBLIC } from './auth.constants';

interface TokenClaims {
  sub?: unknown;
  tenant?: unknown;
  permissions?: unknown;
}

/**
 * Authenticates every request by its HS256 bearer token and puts the caller (tenant, user,
 * permissions) in the request context. Missing or bad token: 401 with what is wrong.
 */
@Injectable()
export class JwtAuthGuard implements CanActivate {
  constructor(
    private readonly jwt: JwtService,
    private readonly cls: ClsService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<Request>();
    const header = request.headers.authorization;
    if (!header) throw new UnauthorizedException('Missing bearer token: send Authorization: Bearer <token> (npm run token mints one).');
    const [scheme, token] = header.split(' ');
    if (scheme !== 'Bearer' || !token) throw new UnauthorizedException('Malformed Authorization header: expected "Bearer <token>".');
    let claims: TokenClaims;
    try {
      claims = await this.jwt.verifyAsync<TokenClaims & object>(token, { algorithms: ['HS256'] });
    } catch (err) {
      const reason = (err as Error).name === 'TokenExpiredError' ? 'the token has expired' : 'the token signature or format is invalid';
      throw new UnauthorizedException(`Invalid bearer token: ${reason}.`);
    }
    const caller = callerFrom(claims);
    this.cls.set(CLS_CALLER, caller);
    (request as Request & { user?: Caller }).user = caller;
    return true;
  }
}

function callerFrom(claims: TokenClaims): Caller {
  if (typeof claims.tenant !== 'string' || claims.tenant === '')
    throw new UnauthorizedException('Invalid bearer token: the "tenant" claim is missing.');
  if (typeof claims.sub !== 'string' || claims.sub === '') throw new UnauthorizedException('Invalid bearer token: the "sub" (user) claim is missing.');
  const perms = claims.permissions ?? [];
  if (!Array.isArray(perms) || perms.some((p) => typeof p !== 'string'))
    throw new UnauthorizedException('Invalid bearer token: "permissions" must be an array of strings.');
  return Object.freeze({ tenantId: claims.tenant, userId: claims.sub, permissions: Object.freeze([...(perms as string[])]) });
}
