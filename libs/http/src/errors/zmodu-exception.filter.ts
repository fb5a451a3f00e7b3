import { randomUUID } from 'node:crypto';
import { ArgumentsHost, Catch, ExceptionFilter, Inject, Logger, Optional } from '@nestjs/common';
import { Redactor } from '@zmodu/guard';
import { jsonRpcErrorBody } from '@zmodu/mcp/internal';
import { ZMODU_HTTP_OPTIONS } from '../http.constants';
import { ExceptionFilterOptions, resolveFilterOptions, ResolvedFilterOptions } from '../zmodu-http.options';
import { HttpAnswer, httpAnswer } from './http-answer';
import { reply } from './reply';

/**
 * Every exception at the HTTP edge ends here (see httpAnswer for the mapping): HttpExceptions keep their answer,
 * every exception of the @zmodu/* libraries gets its status (404 unknown agent, 400 bad goal, 409 conflicts, 429
 * limits, 503 with Retry-After for a database or a tool server that cannot be reached, ...), and anything else is
 * a 500 `{ statusCode, message: 'Internal error', requestId }`, logged once with its stack. Every body and every log
 * line passes the Redactor. On `mcpPath`, the same answer as a JSON-RPC error.
 *
 * Install it with `app.useGlobalFilters(new ZmoduExceptionFilter(app.get(Redactor)))`, or
 * `ZmoduHttpModule.forRoot({ exceptionFilter: true })` (an APP_FILTER with the module's options).
 */
@Catch()
export class ZmoduExceptionFilter implements ExceptionFilter {
  protected readonly logger = new Logger('HttpEdge');
  /** GuardModule's when injected: the application's own patterns and secrets are masked too. */
  private readonly redactor: Redactor;
  private readonly options: ResolvedFilterOptions;

  constructor(@Optional() redactor?: Redactor, @Optional() @Inject(ZMODU_HTTP_OPTIONS) options?: ExceptionFilterOptions) {
    this.redactor = redactor ?? new Redactor();
    this.options = resolveFilterOptions(options);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception; // not an HTTP request: not ours to answer
    const http = host.switchToHttp();
    const req = http.getRequest<unknown>();
    const res = http.getResponse<unknown>();
    const answer = this.answer(exception, this.requestIdOf(req));
    if (this.isMcpRequest(req)) {
      const message = answer.body.message;
      const text = Array.isArray(message) ? message.join('; ') : String(message ?? 'Error');
      return reply(res, answer.status, jsonRpcErrorBody(answer.status, text), answer.retryAfterSeconds);
    }
    reply(res, answer.status, answer.body, answer.retryAfterSeconds);
  }

  /**
   * The status and the redacted body that answer an exception, logged here when it is unexpected or an outage.
   * A run streamed as Server-Sent Events sends this body as its `error` event when it fails after the stream opened.
   */
  answer(exception: unknown, requestId: string = randomUUID()): HttpAnswer {
    const answer = httpAnswer(exception, requestId, this.options.retryAfterSeconds);
    if (answer.log === 'unexpected') this.unexpected(exception, requestId);
    else if (answer.log === 'outage') this.outage(exception, requestId);
    return { ...answer, body: this.redactor.redact(answer.body) as Record<string, unknown> };
  }

  /** The one place an unexpected error (or a library exception that is the server's fault) is logged, with its stack. */
  protected unexpected(exception: unknown, requestId: string): void {
    const err = exception instanceof Error ? exception : new Error(String(exception));
    this.logger.error(
      this.redactor.redactText(`unexpected error (request ${requestId}): ${err.name}: ${err.message}`),
      this.redactor.redactText(err.stack ?? ''),
    );
  }

  /** An outage (the database, a tool server, an upstream): one warning line, no stack. */
  protected outage(exception: unknown, requestId: string): void {
    const text = exception instanceof Error ? `${exception.name}: ${exception.message}` : String(exception);
    this.logger.warn(this.redactor.redactText(`unavailable (request ${requestId}): ${text}`));
  }

  private requestIdOf(req: unknown): string {
    try {
      const id = this.options.requestId(req);
      return typeof id === 'string' && id !== '' ? id : randomUUID();
    } catch {
      return randomUUID();
    }
  }

  private isMcpRequest(req: unknown): boolean {
    const paths = this.options.mcpPaths;
    if (paths.length === 0) return false;
    const r = req as { originalUrl?: unknown; url?: unknown } | null;
    const url = typeof r?.originalUrl === 'string' ? r.originalUrl : typeof r?.url === 'string' ? r.url : '';
    // Express matches routes case-insensitively (/MCP reaches the endpoint too), so this does.
    const path = url.split('?')[0].toLowerCase().replace(/\/+$/, '');
    return paths.includes(path);
  }
}
