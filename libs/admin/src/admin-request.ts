import { BadRequestException, ForbiddenException, UnauthorizedException } from '@nestjs/common';
import { AdminCaller, AdminModuleOptions } from './admin.options';

/** The authenticated caller of an admin request, holding `permission`: 401 without one, 403 without the permission. */
export function adminCaller(options: AdminModuleOptions, req: unknown, permission: string): AdminCaller {
  const resolve = options.resolveCaller ?? ((r: unknown) => (r as { user?: AdminCaller }).user);
  const caller = resolve(req);
  if (
    !caller ||
    typeof caller.tenantId !== 'string' ||
    !caller.tenantId ||
    typeof caller.userId !== 'string' ||
    !Array.isArray(caller.permissions)
  )
    throw new UnauthorizedException('No authenticated caller with a tenant: send a bearer token.');
  if (!caller.permissions.includes(permission)) throw new ForbiddenException(`Missing permission: ${permission}.`);
  return caller;
}

/** An optional whole-number query parameter; anything else is a 400 naming the field. */
export function intParam(field: string, value: string | undefined, min = 1, max = 1_000_000): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!/^\d{1,7}$/.test(value) || n < min || n > max)
    throw new BadRequestException({ message: `${field} must be a whole number from ${min} to ${max}`, field });
  return n;
}

// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A required free-text body field: a non-blank string of at most `max` characters without NUL, other control characters (but tab and newlines) or lone surrogates; else a 400 naming the field. */
export function textField(field: string, value: unknown, what: string, max = 1000): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    throw new BadRequestException({ message: `${field} must be a non-blank string of at most ${max} characters: ${what}`, field });
  if (CONTROL.test(value) || LONE_SURROGATE.test(value))
    throw new BadRequestException({ message: `${field} must not contain NUL, other control characters or lone surrogates`, field });
  return value;
}
