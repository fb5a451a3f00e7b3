import { randomUUID } from 'node:crypto';
import { Catch, HttpException } from '@nestjs/common';
import { httpAnswer } from '@zmodu/http/internal';
import { ZmoduExceptionFilter } from '@zmodu/http';
import { InvalidOutboxQueryException } from '@zmodu/outbox/internal';
import { OutboxConflictException } from '@zmodu/outbox';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ProposalNotFoundException,
} from '@zmodu/pipeline';
import { ConfigKeyImmutableException } from './config/exceptions/config-key-immutable.exception';
import { ConfigKeyUndeclaredException } from './config/exceptions/config-key-undeclared.exception';
import { ConfigVersionConflictException } from './config/exceptions/config-version-conflict.exception';
import { InvalidConfigValueException } from './config/exceptions/invalid-config-value.exception';
import { InvalidConfigWriteException } from './config/exceptions/invalid-config-write.exception';
import { AuditTenantForbiddenException } from './exceptions/audit-tenant-forbidden.exception';
import { CallerNotCheckedException } from './exceptions/caller-not-checked.exception';
import { InvalidAuditFilterException } from './exceptions/invalid-audit-filter.exception';

/** The library exceptions the admin endpoints throw: answered by AdminExceptionFilter even without a global filter. */
export const ADMIN_MAPPED_EXCEPTIONS = [
  InvalidProposalException,
  ProposalNotFoundException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ApprovalForbiddenException,
  OutboxConflictException,
  InvalidOutboxQueryException,
  InvalidAuditFilterException,
  AuditTenantForbiddenException,
  InvalidConfigWriteException,
  InvalidConfigValueException,
  ConfigKeyUndeclaredException,
  ConfigKeyImmutableException,
  ConfigVersionConflictException,
  CallerNotCheckedException,
] as const;

/**
 * The answer of ZmoduExceptionFilter (@zmodu/http) to one of ADMIN_MAPPED_EXCEPTIONS, as an HttpException: 400
 * `{ statusCode, code, message, field }` for invalid input, 404 for a proposal that is not the tenant's, 409
 * `{ ..., status, current }` for a decision on a proposal that moved on, 422 for an edit that cannot apply, 403 for a
 * decision this approver may not take or the audit of another tenant, 409 for a retry of an event that is not dead.
 * Undefined for anything else. Kept for a filter of your own; ZmoduExceptionFilter answers the same.
 */
export function adminHttpException(exception: unknown): HttpException | undefined {
  if (!ADMIN_MAPPED_EXCEPTIONS.some((type) => exception instanceof type)) return undefined;
  const answer = httpAnswer(exception, randomUUID());
  return new HttpException(answer.body, answer.status);
}

/**
 * ZmoduExceptionFilter of @zmodu/http, scoped to the admin controllers and to the library exceptions they throw, so that
 * they keep their status codes in an application without the global filter. Everything else (HttpExceptions, a
 * database away, unexpected errors) goes on to the application's global filter.
 */
@Catch(...ADMIN_MAPPED_EXCEPTIONS)
export class AdminExceptionFilter extends ZmoduExceptionFilter {}
