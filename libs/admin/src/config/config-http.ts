import {
  BadRequestException,
  ConflictException,
  ForbiddenException,
  GatewayTimeoutException,
  HttpException,
  InternalServerErrorException,
  NotFoundException,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { SkillCallResult } from '@zmodu/skills';
import { CONFIG_SKILL_REASONS } from '../skills/admin-config.skills';

/** The Retry-After (seconds) of a 503 for a config store that cannot be reached. */
export const CONFIG_RETRY_AFTER_SECONDS = 5;

/**
 * The HTTP answer of a refused or failed admin.config.set call: 400 invalid arguments or value (with the problems),
 * 404 an undeclared key, 403 a read-only key or a missing permission, 409 a stale expectedVersion (with the current
 * version), 429 a spent token budget, 503 a config store that cannot be reached (send Retry-After:
 * CONFIG_RETRY_AFTER_SECONDS), 504 a timeout, 500 anything else (no internal text).
 */
export function configHttpException(result: SkillCallResult): HttpException {
  const error = result.error ?? { error: 'SkillFailed', reason: 'internal_error' };
  const message = typeof error.message === 'string' ? error.message : `${error.error}: ${error.reason}`;
  switch (result.cause) {
    case 'invalid_arguments':
      return new BadRequestException({
        message: 'Invalid config write: the key or the value is not acceptable',
        problems: error.problems ?? [],
      });
    case 'missing_permission':
      return new ForbiddenException(`Missing permission: ${String(error.permission)}.`);
    case 'denied_budget':
      return new HttpException(
        { statusCode: 429, message: 'The token budget of this tenant is spent: try again in the next period.' },
        429,
      );
    case 'tenant_required':
      return new UnauthorizedException('No tenant: send a bearer token of a tenant.');
  }
  if (result.decision === 'denied') return new ForbiddenException(`Refused: ${error.reason}.`);
  if (result.outcome === 'timeout' || result.outcome === 'cancelled')
    return new GatewayTimeoutException('The config write did not finish in time; read the key to see whether it landed.');
  switch (error.reason) {
    case CONFIG_SKILL_REASONS.invalid:
      return new BadRequestException({ message, problems: error.problems ?? [] });
    case CONFIG_SKILL_REASONS.undeclared:
      return new NotFoundException(message);
    case CONFIG_SKILL_REASONS.immutable:
      return new ForbiddenException(message);
    case CONFIG_SKILL_REASONS.conflict:
      return new ConflictException({ message, expectedVersion: error.expectedVersion, currentVersion: error.currentVersion });
    case CONFIG_SKILL_REASONS.unavailable:
      return new ServiceUnavailableException(message);
    default:
      return new InternalServerErrorException();
  }
}
