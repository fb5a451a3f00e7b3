import { Redactor } from '@zmodu/guard';
import { PINO_OPTIONS_REDACTOR_MESSAGE } from '../skill.messages';
import { zmoduLogContext } from './log-context';

/**
 * Request and response headers that hold credentials, censored by pino's own `redact` (pino-http logs `req` and `res`
 * with their headers).
 */
export const ZMODU_LOG_REDACT_PATHS: readonly string[] = Object.freeze([
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
]);

/**
 * Options for pino (and `pinoHttp` of nestjs-pino), spread into yours. Typed by shape, so that this library needs no pino:
 * they fit pino 9's `LoggerOptions`.
 */
export interface ZmoduPinoOptions {
  /** `{ runId, tenantId, agent }` on each line written during a run or a tool call (zmoduLogContext). */
  mixin: () => Record<string, unknown>;
  /** The credential headers (ZMODU_LOG_REDACT_PATHS), censored with the redactor's replacement. */
  redact: { paths: string[]; censor: string };
  /** Each line, as written: its secrets, tokens, card numbers (and whatever else the redactor masks) masked. */
  hooks: { streamWrite: (line: string) => string };
}

/**
 * Structured logs without secrets, with the run on every line:
 *
 * ```ts
 * LoggerModule.forRootAsync({ inject: [Redactor], useFactory: (r: Redactor) => ({ pinoHttp: zmoduPinoOptions(r) }) })
 * ```
 *
 * The redactor is GuardModule's (its `redaction` options: the same rules as for the model, the audit and HTTP). It is
 * applied to each whole line as pino writes it (`hooks.streamWrite`): the message, the merged objects, an error's message
 * and stack, a child logger's bindings. A line is parsed and redacted as JSON (so secret-named keys such as `password` or
 * `token` are masked whatever their value looks like), or as text when it is not JSON (a custom formatter).
 * `x-sensitive` fields are masked by the dispatcher before anything about a call is logged.
 */
export function zmoduPinoOptions(redactor: Redactor = new Redactor()): ZmoduPinoOptions {
  if (!(redactor instanceof Redactor)) throw new TypeError(PINO_OPTIONS_REDACTOR_MESSAGE);
  return {
    mixin: () => zmoduLogContext(),
    redact: { paths: [...ZMODU_LOG_REDACT_PATHS], censor: redactor.replacement },
    hooks: { streamWrite: (line) => redactLine(redactor, line) },
  };
}

function redactLine(redactor: Redactor, line: string): string {
  const end = line.endsWith('\r\n') ? '\r\n' : line.endsWith('\n') ? '\n' : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return redactor.redactText(line);
  }
  return `${JSON.stringify(redactor.redact(parsed))}${end}`;
}
