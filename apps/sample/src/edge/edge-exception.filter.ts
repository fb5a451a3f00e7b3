import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { AgentNotFoundException } from '@zmodu/agent';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ProposalNotFoundException,
} from '@zmodu/pipeline';
import { OutboxConflictException } from '@zmodu/outbox';
import { jsonRpcErrorBody } from '@zmodu/mcp';
import type { Request, Response } from 'express';
import { ClsServiceManager } from 'nestjs-cls';
import { SAMPLE_MCP_PATH } from '../mcp.policy';
import { isDatabaseUnavailable } from './database-unavailable';

/** Library exceptions the edge knows, and their status codes. */
const KNOWN: Array<[new (...args: never[]) => Error, number]> = [
  [AgentNotFoundException, HttpStatus.NOT_FOUND],
  [ProposalNotFoundException, HttpStatus.NOT_FOUND],
  [InvalidProposalException, HttpStatus.BAD_REQUEST],
  [ProposalConflictException, HttpStatus.CONFLICT],
  [ProposalEditRefusedException, HttpStatus.UNPROCESSABLE_ENTITY],
  [ApprovalForbiddenException, HttpStatus.FORBIDDEN],
  [OutboxConflictException, HttpStatus.CONFLICT],
];

/** Seconds a client should wait before retrying when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * Every exception at the HTTP edge ends here. HttpExceptions keep their status and body; known
 * library exceptions map to their status codes; a database that cannot be reached is a 503 with
 * Retry-After; a client error of the body parser keeps its 4xx. Anything else is unexpected:
 * logged once with its stack, answered 500 `{ statusCode, message: 'Internal error', requestId }`.
 */
@Catch()
export class EdgeExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpEdge');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    // An MCP client gets a JSON-RPC error from the edge too (401, 413, a body that is not JSON: a parse error).
    if (isMcpRequest(http.getRequest<Request>())) return this.mcp(exception, res);
    const requestId = currentRequestId();
    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      return send(res, exception.getStatus(), typeof body === 'string' ? { statusCode: exception.getStatus(), message: body } : body);
    }
    const known = KNOWN.find(([type]) => exception instanceof type);
    if (known) {
      const err = exception as Error & { field?: unknown; status?: unknown; current?: unknown };
      return send(res, known[1], {
        statusCode: known[1],
        message: err.message,
        ...(err.field !== undefined ? { field: err.field } : {}),
        ...(exception instanceof ProposalConflictException ? { status: err.status, current: err.current ?? null } : {}),
      });
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(`database unavailable (request ${requestId ?? '-'}): ${(exception as Error)?.message ?? String(exception)}`);
      res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      return send(res, HttpStatus.SERVICE_UNAVAILABLE, {
        statusCode: HttpStatus.SERVICE_UNAVAILABLE,
        message: `The database is unavailable: retry in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`,
        requestId,
      });
    }
    const parserStatus = clientErrorStatus(exception);
    if (parserStatus) return send(res, parserStatus, { statusCode: parserStatus, message: (exception as Error).message, field: 'body' });
    this.unexpected(exception, requestId);
    send(res, HttpStatus.INTERNAL_SERVER_ERROR, { statusCode: HttpStatus.INTERNAL_SERVER_ERROR, message: 'Internal error', requestId });
  }

  private mcp(exception: unknown, res: Response): void {
    const status =
      exception instanceof HttpException ? exception.getStatus() : (clientErrorStatus(exception) ?? HttpStatus.INTERNAL_SERVER_ERROR);
    if (status === HttpStatus.INTERNAL_SERVER_ERROR) this.unexpected(exception, currentRequestId());
    const message = status === HttpStatus.INTERNAL_SERVER_ERROR ? 'Internal error' : messageOf(exception);
    send(res, status, jsonRpcErrorBody(status, message));
  }

  /** The one place an unexpected error is logged (with its stack, in the log only). */
  protected unexpected(exception: unknown, requestId: string | undefined): void {
    const err = exception instanceof Error ? exception : new Error(String(exception));
    this.logger.error(`unexpected error (request ${requestId ?? '-'}): ${err.message}`, err.stack);
  }
}

function isMcpRequest(req: Request | undefined): boolean {
  const path = (req?.originalUrl ?? req?.url ?? '').split('?')[0];
  return path === SAMPLE_MCP_PATH || path === `${SAMPLE_MCP_PATH}/`;
}

/** The message of an HttpException (its response's message, joined when a list) or of a body-parser error. */
function messageOf(exception: unknown): string {
  if (exception instanceof HttpException) {
    const body = exception.getResponse();
    const message = typeof body === 'string' ? body : (body as { message?: unknown }).message;
    return Array.isArray(message) ? message.join('; ') : String(message ?? exception.message);
  }
  return (exception as Error).message;
}

function send(res: Response, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.status(status).json(body);
}

/** A 4xx of express's body parser (http-errors: `status` and `expose`), e.g. malformed JSON or over its byte limit. */
function clientErrorStatus(err: unknown): number | undefined {
  const e = err as { status?: unknown; expose?: unknown; type?: unknown } | null;
  if (!e || typeof e !== 'object' || typeof e.status !== 'number' || e.expose !== true) return undefined;
  return e.status >= 400 && e.status < 500 ? e.status : undefined;
}

function currentRequestId(): string | undefined {
  try {
    const cls = ClsServiceManager.getClsService();
    return cls.isActive() ? cls.getId() : undefined;
  } catch {
    return undefined;
  }
}
