import {
  ArgumentsHost,
  BadRequestException,
  Catch,
  ConflictException,
  ExceptionFilter,
  ForbiddenException,
  HttpException,
  NotFoundException,
  UnprocessableEntityException,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AuditTenantForbiddenException } from './exceptions/audit-tenant-forbidden.exception';
import { InvalidAuditFilterException } from './exceptions/invalid-audit-filter.exception';
import { OutboxConflictException } from '@zmodu/outbox';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ProposalNotFoundException,
} from '@zmodu/pipeline';

/** The library exceptions the admin endpoints answer with a status code of their own. */
export const ADMIN_MAPPED_EXCEPTIONS = [
  InvalidProposalException,
  ProposalNotFoundException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ApprovalForbiddenException,
  OutboxConflictException,
  InvalidAuditFilterException,
  AuditTenantForbiddenException,
] as const;

/**
 * The HTTP answer of a pipeline or outbox exception: 400 `{ message, field }` for invalid input,
 * 404 for a proposal that is not the tenant's, 409 `{ message, status, current }` for a decision
 * on a proposal that moved on, 422 `{ message, field }` for an edit that cannot apply, 403 for a
 * decision this approver may not take, 409 for a retry of an event that is not dead, 400 `{ message, field }` for an
 * audit filter it cannot read, 403 for the audit of another tenant. Undefined
 * for anything else. An application's own filter can call it too.
 */
export function adminHttpException(exception: unknown): HttpException | undefined {
  if (exception instanceof InvalidProposalException) return new BadRequestException({ message: exception.message, field: exception.field });
  if (exception instanceof ProposalNotFoundException) return new NotFoundException(exception.message);
  if (exception instanceof ProposalConflictException)
    return new ConflictException({ message: exception.message, status: exception.status, current: exception.current ?? null });
  if (exception instanceof ProposalEditRefusedException)
    return new UnprocessableEntityException({ message: exception.message, field: exception.field ?? null });
  if (exception instanceof ApprovalForbiddenException) return new ForbiddenException(exception.message);
  if (exception instanceof OutboxConflictException) return new ConflictException(exception.message);
  if (exception instanceof InvalidAuditFilterException)
    return new BadRequestException({ message: exception.message, field: exception.field });
  if (exception instanceof AuditTenantForbiddenException) return new ForbiddenException(exception.message);
  return undefined;
}

/**
 * Answers the pipeline and outbox exceptions of the admin controllers with their status codes
 * (see adminHttpException). It is scoped to those controllers, so it runs before an application's
 * global filter, which still sees everything else (HttpExceptions, unexpected errors).
 */
@Catch(...ADMIN_MAPPED_EXCEPTIONS)
export class AdminExceptionFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: Error, host: ArgumentsHost): void {
    const http = adminHttpException(exception) as HttpException;
    const adapter = this.adapterHost.httpAdapter;
    const res: unknown = host.switchToHttp().getResponse();
    if (adapter.isHeadersSent(res)) return;
    const body = http.getResponse();
    adapter.reply(res, typeof body === 'string' ? { statusCode: http.getStatus(), message: body } : body, http.getStatus());
  }
}
