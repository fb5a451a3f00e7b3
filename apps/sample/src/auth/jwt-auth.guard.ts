import { CanActivate, ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { JwtService } from '@nestjs/jwt';
import { ClsService } from 'nestjs-cls';
import type { Request } from 'express';
import { scopeIdProblem } from '@zmodu/guard';
import { EDGE_OPTIONS, EdgeOptions } from '../edge/edge.options';
import { Caller, CLS_CALLER } from './auth.constants';
import { isPublicRoute } from './require-permission.decorator';

/** Exactly `Bearer <token>`: one space, a token of JWT characters, nothing after. */
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/;
/** A permission name: letters, digits and . _ : -, starting with a letter. */
const PERMISSION = /^[A-Za-z][A-Za-z0-9._:-]{0,63}$/;
const MAX_PERMISSIONS = 64;
/** Longest tenant or user claim accepted. */
const MAX_CLAIM_ID = 128;

interface TokenClaims {
  aud?: unknown;
  sub?: unknown;
  tenant?: unknown;
  permissions?: unknown;
  exp?: unknown;
  iat?: unknown;
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
    @Inject(EDGE_OPTIONS) private readonly options: EdgeOptions,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (isPublicRoute(this.reflector, context)) return true;
    const request = context.switchToHttp().getRequest<Request>();
    const caller = await authenticateBearer(this.jwt, this.options, request.headers.authorization);
    this.cls.set(CLS_CALLER, caller);
    (request as Request & { user?: Caller }).user = caller;
    return true;
  }
}

/**
 * The caller of an `Authorization` header: exactly `Bearer <token>`, an HS256 token with a bounded lifetime, its
 * tenant, user and permissions checked like input. Anything else is a 401 saying what is wrong. JwtAuthGuard's check,
 * also used by the routes that read the header themselves (GET /metrics: the scrape token or a JWT).
 */
export async function authenticateBearer(jwt: JwtService, options: EdgeOptions, header: string | undefined): Promise<Caller> {
  if (!header) throw new UnauthorizedException('Missing bearer token: send Authorization: Bearer <token> (npm run token mints one).');
  const token = BEARER.exec(header)?.[1];
  if (!token)
    throw new UnauthorizedException('Malformed Authorization header: expected exactly "Bearer <token>" (one space, nothing after).');
  let claims: TokenClaims;
  try {
    claims = await jwt.verifyAsync<TokenClaims & object>(token, { algorithms: ['HS256'] });
  } catch (err) {
    const reason = (err as Error).name === 'TokenExpiredError' ? 'the token has expired' : 'the token signature or format is invalid';
    throw new UnauthorizedException(`Invalid bearer token: ${reason}.`);
  }
  checkLifetime(claims, options);
  return callerFrom(claims);
}

/** A token must expire, within maxTokenLifetimeSeconds of its issue (or of now), and must not be issued in the future. */
function checkLifetime(claims: TokenClaims, options: EdgeOptions): void {
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp))
    throw new UnauthorizedException('Invalid bearer token: the "exp" claim is missing; tokens must expire.');
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat)))
    throw new UnauthorizedException('Invalid bearer token: the "iat" claim must be a number of seconds.');
  const iat = claims.iat as number | undefined;
  if (iat !== undefined && iat > now + options.clockSkewSeconds)
    throw new UnauthorizedException('Invalid bearer token: the "iat" claim is in the future.');
  const lifetime = claims.exp - (iat ?? now);
  if (lifetime > options.maxTokenLifetimeSeconds)
    throw new UnauthorizedException(
      `Invalid bearer token: the "exp" claim is ${lifetime} s after issue; at most ${options.maxTokenLifetimeSeconds} s is accepted.`,
    );
}

function callerFrom(claims: TokenClaims): Caller {
  const tenantId = claimId('tenant', claims.tenant);
  const userId = claimId('sub', claims.sub);
  const perms = claims.permissions ?? [];
  if (!Array.isArray(perms) || perms.length > MAX_PERMISSIONS || perms.some((p) => typeof p !== 'string' || !PERMISSION.test(p)))
    throw new UnauthorizedException(
      `Invalid bearer token: the "permissions" claim must be an array of at most ${MAX_PERMISSIONS} permission names (${PERMISSION.source}).`,
    );
  const aud = claims.aud;
  if (aud !== undefined && typeof aud !== 'string' && !(Array.isArray(aud) && aud.length <= 16 && aud.every((a) => typeof a === 'string')))
    throw new UnauthorizedException('Invalid bearer token: the "aud" claim must be a string or an array of at most 16 strings.');
  return Object.freeze({
    tenantId,
    userId,
    permissions: Object.freeze([...(perms as string[])]),
    ...(aud !== undefined ? { audience: Object.freeze(typeof aud === 'string' ? [aud] : [...(aud as string[])]) } : {}),
  });
}

/**
 * The tenant or the user of the token: 1 to MAX_CLAIM_ID characters, and an id under the one rule of every door
 * (scopeIdProblem of @zmodu/guard: no control, format or invisible character, NFC, not '0', ...), so that `lee\u200b`
 * is never a user who looks like `lee`. Anything else is a 401 naming the claim.
 */
function claimId(claim: 'tenant' | 'sub', value: unknown): string {
  if (value === undefined || value === '')
    throw new UnauthorizedException(`Invalid bearer token: the ${claim === 'sub' ? '"sub" (user)' : '"tenant"'} claim is missing.`);
  if (typeof value === 'string' && value.length > MAX_CLAIM_ID)
    throw new UnauthorizedException(`Invalid bearer token: the "${claim}" claim must be 1 to ${MAX_CLAIM_ID} characters.`);
  const problem = scopeIdProblem(`the "${claim}" claim`, value);
  if (problem) throw new UnauthorizedException(`Invalid bearer token: ${problem}.`);
  return value as string;
}
