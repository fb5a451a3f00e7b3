import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, Inject, Injectable, LoggerService, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import type { DestinationStream, Logger as Pino, LoggerOptions } from 'pino';
import { pinoHttp, HttpLogger } from 'pino-http';

/**
 * The sample's JSON logs: pino-http per application (the request's line, `req.id`), and a Nest `LoggerService` that writes
 * every Nest `Logger` line through the request's logger while a request is handled (so a run's lines carry its request),
 * through the application's root logger otherwise.
 *
 * Why not nestjs-pino: its 5.x line (the one for Nest 12) keeps one pino-http instance per process, made by the first
 * application that logs, so a second application in the same process (a test file that boots several) writes with the
 * first one's level, destination and redactor. Here each application has its own.
 */
export interface JsonLogsOptions {
  readonly pino: LoggerOptions;
  readonly destination?: DestinationStream;
}

export const JSON_LOGS_OPTIONS = Symbol('JSON_LOGS_OPTIONS');

interface JsonLogsAsyncOptions {
  readonly inject?: unknown[];
  readonly useFactory: (...args: never[]) => JsonLogsOptions | Promise<JsonLogsOptions>;
}

@Injectable()
export class JsonLogger implements LoggerService {
  readonly http: HttpLogger;
  private readonly requests = new AsyncLocalStorage<Pino>();

  constructor(@Inject(JSON_LOGS_OPTIONS) options: JsonLogsOptions) {
    this.http = options.destination ? pinoHttp(options.pino, options.destination) : pinoHttp(options.pino);
  }

  /** The middleware: pino-http's, then the rest of the request inside that request's logger. */
  middleware = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    this.http(req, res);
    const log = (req as IncomingMessage & { log?: Pino }).log ?? this.http.logger;
    this.requests.run(log, next);
  };

  private get pino(): Pino {
    return this.requests.getStore() ?? this.http.logger;
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest's calling convention: the last optional parameter is the context; `error(message, stack, context)`. */
  private write(level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal', message: unknown, rest: unknown[]): void {
    const fields: Record<string, unknown> = {};
    let params = rest;
    if (rest.length > 0) {
      fields.context = rest[rest.length - 1];
      params = rest.slice(0, -1);
    }
    const pino = this.pino;
    if (message instanceof Error) {
      fields.err = message;
      pino[level](fields, ...(params as []));
    } else if (typeof message === 'object' && message !== null) {
      pino[level]({ ...(message as Record<string, unknown>), ...fields }, ...(params as []));
    } else if (
      level === 'error' &&
      typeof message === 'string' &&
      params.length === 1 &&
      typeof params[0] === 'string' &&
      /\n\s*at /.test(params[0])
    ) {
      // Nest's exception handlers call error(message, stack, context).
      const err = new Error(message);
      err.stack = params[0];
      pino[level]({ ...fields, err });
    } else {
      pino[level](fields, String(message), ...(params as []));
    }
  }
}

@Module({})
export class JsonLogsModule implements NestModule {
  constructor(private readonly logger: JsonLogger) {}

  static forRootAsync(options: JsonLogsAsyncOptions): DynamicModule {
    return {
      module: JsonLogsModule,
      global: true,
      providers: [{ provide: JSON_LOGS_OPTIONS, inject: (options.inject ?? []) as never[], useFactory: options.useFactory }, JsonLogger],
      exports: [JsonLogger],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(this.logger.middleware).forRoutes({ path: '*path', method: RequestMethod.ALL });
  }
}
