import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger, Optional } from '@nestjs/common';
import { AgentNotFoundException, InvalidGoalException, MailboxFullException } from '@zmodu/agent';
import {
  ApprovalForbiddenException,
  InvalidProposalException,
  ProposalConflictException,
  ProposalEditRefusedException,
  ProposalNotFoundException,
} from '@zmodu/pipeline';
import { OutboxConflictException } from '@zmodu/outbox';
import { Redactor } from '@zmodu/guard';
import { jsonRpcErrorBody } from '@zmodu/mcp';
import type { Request, Response } from 'express';
import { ClsServiceManager } from 'nestjs-cls';
import { SAMPLE_MCP_PATH } from '../mcp.policy';
import { isDatabaseUnavailable } from '@zmodu/db';

/** Library exceptions the edge knows, and their status codes. */
const KNOWN: Array<[new (...args: never[]) => Error, number]> = [
  [AgentNotFoundException, HttpStatus.NOT_FOUND],
  [InvalidGoalException, HttpStatus.BAD_REQUEST],
  [ProposalNotFoundException, HttpStatus.NOT_FOUND],
  [InvalidProposalException, HttpStatus.BAD_REQUEST],
  [ProposalConflictException, HttpStatus.CONFLICT],
  [ProposalEditRefusedException, HttpStatus.UNPROCESSABLE_ENTITY],
  [ApprovalForbiddenException, HttpStatus.FORBIDDEN],
  [OutboxConflictException, HttpStatus.CONFLICT],
];

/** How the edge answers an exception: status, JSON body, and for an outage the seconds to wait (Retry-After). */
export interface EdgeAnswer {
  readonly status: number;
  readonly body: object;
  readonly retryAfterSeconds?: number;
}

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
  /** GuardModule's: every answer's body and the log line of an unexpected error pass it (no secret leaves by an error). */
  private readonly redactor: Redactor;

  constructor(@Optional() redactor?: Redactor) {
    this.redactor = redactor ?? new Redactor();
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    // An MCP client gets a JSON-RPC error from the edge too (401, 413, a body that is not JSON: a parse error).
    if (isMcpRequest(http.getRequest<Request>())) return this.mcp(exception, res);
    const answer = this.answer(exception, currentRequestId());
    if (answer.retryAfterSeconds !== undefined && !res.headersSent) res.setHeader('Retry-After', String(answer.retryAfterSeconds));
    send(res, answer.status, answer.body);
  }

  /**
   * The status and body that answer an exception (logged here when it is unexpected or an outage). An agent run
   * streamed as Server-Sent Events sends this body as its `error` event when it fails after the stream started.
   */
  answer(exception: unknown, requestId: string | undefined): EdgeAnswer {
    const answer = this.answerOf(exception, requestId);
    return { ...answer, body: this.redactor.redact(answer.body) as object };
  }

  private answerOf(exception: unknown, requestId: string | undefined): EdgeAnswer {
    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      return {
        status: exception.getStatus(),
        body: typeof body === 'string' ? { statusCode: exception.getStatus(), message: body } : body,
      };
    }
    if (exception instanceof MailboxFullException) {
      const status = HttpStatus.TOO_MANY_REQUESTS;
      return { status, body: { statusCode: status, message: exception.message }, retryAfterSeconds: exception.retryAfterSeconds };
    }
    const known = KNOWN.find(([type]) => exception instanceof type);
    if (known) {
      const err = exception as Error & { field?: unknown; status?: unknown; current?: unknown };
      return {
        status: known[1],
        body: {
          statusCode: known[1],
          message: err.message,
          ...(err.field !== undefined ? { field: err.field } : {}),
          ...(exception instanceof ProposalConflictException ? { status: err.status, current: err.current ?? null } : {}),
        },
      };
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(
        this.redactor.redactText(
          `database unavailable (request ${requestId ?? '-'}): ${(exception as Error)?.message ?? String(exception)}`,
        ),
      );
      const status = HttpStatus.SERVICE_UNAVAILABLE;
      const message = `The database is unavailable: retry in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`;
      return { status, body: { statusCode: status, message, requestId }, retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS };
    }
    const parserStatus = clientErrorStatus(exception);
    if (parserStatus)
      return { status: parserStatus, body: { statusCode: parserStatus, message: (exception as Error).message, field: 'body' } };
    this.unexpected(exception, requestId);
    const status = HttpStatus.INTERNAL_SERVER_ERROR;
    return { status, body: { statusCode: status, message: 'Internal error', requestId } };
  }

  /** The same answer as JSON-RPC error (a database outage stays a 503 with Retry-After). */
  private mcp(exception: unknown, res: Response): void {
    const answer = this.answer(exception, currentRequestId());
    if (answer.retryAfterSeconds !== undefined && !res.headersSent) res.setHeader('Retry-After', String(answer.retryAfterSeconds));
    const message = (answer.body as { message?: unknown }).message;
    send(res, answer.status, jsonRpcErrorBody(answer.status, Array.isArray(message) ? message.join('; ') : String(message ?? 'Error')));
  }

  /** The one place an unexpected error is logged (with its stack, in the log only). */
  protected unexpected(exception: unknown, requestId: string | undefined): void {
    const err = exception instanceof Error ? exception : new Error(String(exception));
    this.logger.error(
      this.redactor.redactText(`unexpected error (request ${requestId ?? '-'}): ${err.message}`),
      this.redactor.redactText(err.stack ?? ''),
    );
  }
}

function isMcpRequest(req: Request | undefined): boolean {
  // Express matches routes case-insensitively (/MCP reaches the endpoint too), so this does.
  const path = (req?.originalUrl ?? req?.url ?? '').split('?')[0].toLowerCase();
  return path === SAMPLE_MCP_PATH || path === `${SAMPLE_MCP_PATH}/`;
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
