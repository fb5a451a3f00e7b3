import { randomUUID } from 'node:crypto';
import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  ForbiddenException,
  HttpException,
  Inject,
  Injectable,
  Logger,
  Optional,
  SetMetadata,
  UnauthorizedException,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Redactor } from '@zmodu/guard';
import { CALLER_CONTEXT, CALLER_OPTION_PERMISSIONS, CALLER_PERMISSIONS, ZMODU_HTTP_OPTIONS } from '../http.constants';
import { MISSING_PERMISSION_MESSAGE, RESOLVE_CALLER_FAILED_MESSAGE } from '../http.messages';
import type { ResolvedHttpOptions } from '../zmodu-http.options';
import { CallerContextMissingException } from '../exceptions/caller-context-missing.exception';
import { checkCaller, HttpCallerContext } from './http-caller';

/** A request id that can be a run id: the one resolveCaller's sibling `requestId` gives, else a new UUID. */
const SAFE_RUN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The guard of the caller contract: `resolveCaller(request)` (ZmoduHttpModule's option, by default `request.user`)
 * must give a caller (else 401), in a tenant, with a user id (else 403, see checkCaller), holding every permission
 * `@RequireCaller(...)` names (else 403 naming the missing ones). The checked caller and the request's run id are put on
 * the request for `@CallerContext()`.
 */
@Injectable()
export class HttpCallerGuard implements CanActivate {
  private readonly logger = new Logger('HttpCallerGuard');
  /** GuardModule's when injected: what resolveCaller threw may hold the credential it could not verify. */
  private readonly redactor: Redactor;

  constructor(
    private readonly reflector: Reflector,
    @Inject(ZMODU_HTTP_OPTIONS) private readonly options: ResolvedHttpOptions,
    @Optional() redactor?: Redactor,
  ) {
    this.redactor = redactor ?? new Redactor();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Record<PropertyKey, unknown>>();
    const targets = [context.getHandler(), context.getClass()];
    const named = this.reflector.getAllAndMerge<PermissionOption[]>(CALLER_OPTION_PERMISSIONS, targets) ?? [];
    const fromOptions = named.map((option) => this.options[option]).filter((p): p is string => typeof p === 'string');
    const required = [...(this.reflector.getAllAndMerge<string[]>(CALLER_PERMISSIONS, targets) ?? []), ...fromOptions];
    let found: unknown;
    try {
      found = await this.options.resolveCaller(request);
    } catch (err) {
      if (err instanceof HttpException) throw err; // the application's own answer (e.g. its 401)
      this.logger.warn(this.redactor.redactText(`resolveCaller threw: ${(err as Error)?.message ?? String(err)}`));
      throw new UnauthorizedException(RESOLVE_CALLER_FAILED_MESSAGE);
    }
    const caller = checkCaller(found);
    const missing = required.filter((p) => !caller.permissions.includes(p));
    if (missing.length > 0) throw new ForbiddenException(MISSING_PERMISSION_MESSAGE(missing));
    const given = this.options.requestId(request);
    const runId = typeof given === 'string' && SAFE_RUN_ID.test(given) ? given : randomUUID();
    request[CALLER_CONTEXT] = Object.freeze({ ...caller, runId }) satisfies HttpCallerContext;
    return true;
  }
}

/** The options that name a permission a route of ours requires (null in the options: none). */
export type PermissionOption = 'runPermission';

/** @internal The route needs a checked caller holding the permission the option names (the runs controller's). */
export function RequireCallerWithOption(option: PermissionOption): ClassDecorator & MethodDecorator {
  return applyDecorators(SetMetadata(CALLER_OPTION_PERMISSIONS, [option]), UseGuards(HttpCallerGuard));
}

/**
 * The route (or every route of the controller) needs a checked caller (HttpCallerGuard) holding these permissions.
 * Needs ZmoduHttpModule in the application (global by default).
 */
export function RequireCaller(...permissions: string[]): ClassDecorator & MethodDecorator {
  if (permissions.some((p) => typeof p !== 'string' || p.trim() === ''))
    throw new TypeError('@RequireCaller(...permissions): each permission must be a non-empty string.');
  return applyDecorators(SetMetadata(CALLER_PERMISSIONS, permissions), UseGuards(HttpCallerGuard));
}

/** The checked caller context of a request (HttpCallerGuard ran), or undefined. */
export function callerContextOf(request: unknown): HttpCallerContext | undefined {
  const r = request as Record<PropertyKey, unknown> | null | undefined;
  return (r?.[CALLER_CONTEXT] as HttpCallerContext | undefined) ?? undefined;
}

/**
 * `@CallerContext() caller: HttpCallerContext`: the tenant, user, permissions and run id of the request, as
 * HttpCallerGuard checked them (the route needs `@RequireCaller()`; reading it without is a programming error, a 500).
 */
export const CallerContext = createParamDecorator((_: unknown, context: ExecutionContext): HttpCallerContext => {
  const caller = callerContextOf(context.switchToHttp().getRequest());
  if (!caller) throw new CallerContextMissingException();
  return caller;
});
