import { ownOptions } from '@zmodu/core';
import { HttpCaller } from './caller/http-caller';
import { callerFromRequestUser } from './caller/http-caller';
import { DEFAULT_RETRY_AFTER_SECONDS } from './errors/http-answer';
import { InvalidHttpOptionsException } from './exceptions/invalid-http-options.exception';

/** What the exception filter reads of the options (ZmoduExceptionFilter takes these alone too). */
export interface ExceptionFilterOptions {
  /**
   * The request id of a request: its 500 and 503 bodies carry it, the log lines of its errors name it, and the runs
   * it starts have it as run id. Default: a new UUID for each (give e.g. `() => cls.getId()` to use nestjs-cls's).
   */
  readonly requestId?: (request: unknown) => string | undefined;
  /** Seconds of `Retry-After` on a 503 for a database that cannot be reached. Default 5. */
  readonly retryAfterSeconds?: number;
  /**
   * The path (or paths) of McpModule's endpoint: errors there are answered as JSON-RPC errors (jsonRpcErrorBody of
   * @zmodu/mcp), with the same status. Default: none.
   */
  readonly mcpPath?: string | readonly string[];
}

/** Options of `ZmoduHttpModule.forRoot` / `forRootAsync` (what is served is given beside them: see ZmoduHttpModuleExtras). */
export class ZmoduHttpModuleOptions implements ExceptionFilterOptions {
  /**
   * The caller of a request: its tenant, user and permissions, which every skill call and agent run of the request
   * gets. Default: `request.user` as `{ tenantId, userId, permissions }` (what an authentication guard sets). Never
   * read from the body, a query or a header: map your authentication's user here (`(req) => ({ tenantId:
   * req.user.org, userId: req.user.sub, permissions: req.user.scopes })`). May be async.
   */
  resolveCaller?: (request: unknown) => HttpCaller | null | undefined | Promise<HttpCaller | null | undefined> = callerFromRequestUser;
  /** See ExceptionFilterOptions.requestId. */
  requestId?: (request: unknown) => string | undefined = () => undefined;
  /** The permission the runs controller's routes require of the caller; `null` for none. Default 'agent:run'. */
  runPermission?: string | null = 'agent:run';
  /** The longest goal POST /agents/:name/runs and /goals take, in characters. Default 4000. */
  maxGoalLength?: number = 4000;
  /** See ExceptionFilterOptions.retryAfterSeconds. Default 5. */
  retryAfterSeconds?: number = DEFAULT_RETRY_AFTER_SECONDS;
  /** See ExceptionFilterOptions.mcpPath. */
  mcpPath?: string | readonly string[] = [];
  /**
   * Whether a synchronous run (POST /agents/:name/runs) may wait for a human, with AgentWorkerModule imported: then it
   * is stored like a posted goal (its record and journal, under a new run id), and a proposal that needs a human ends
   * the request with 202 `{ runId, status: 'waiting', waitingFor }`; the run goes on in the background once it is
   * decided (docs/worker.md). `'prefer'` (default): when the request says `Prefer: respond-async` (RFC 7240; the answer
   * then says `Preference-Applied: respond-async`); `'always'`: every synchronous run; `'never'`: none (the model is
   * told that the proposal waits, and goes on; the run is not stored, and its run id is the request id).
   */
  runsWait?: 'prefer' | 'always' | 'never' = 'prefer';
}

/** Which parts ZmoduHttpModule serves. They decide providers and routes, so they are given beside the options. */
export interface ZmoduHttpModuleExtras {
  /** Install ZmoduExceptionFilter as a global filter (APP_FILTER), with these options. Default false. */
  exceptionFilter?: boolean;
  /**
   * Serve the agent runs controller: POST /agents/:name/runs (JSON, or Server-Sent Events with Accept:
   * text/event-stream), POST /agents/:name/goals (AgentWorker, 202), GET /agents/:name/runs/:id and GET
   * /agents/runs/:id (a background run of the caller's tenant). Default false: no route.
   */
  runsController?: boolean;
  /** Make the module global (HttpCallerGuard and @RequireCaller() work in every module). Default true. */
  isGlobal?: boolean;
}

/** The options after the defaults are merged and checked. */
export type ResolvedHttpOptions = Required<Omit<ZmoduHttpModuleOptions, 'mcpPath'>> & { readonly mcpPaths: readonly string[] };

/** The filter's options, resolved. */
export type ResolvedFilterOptions = Pick<ResolvedHttpOptions, 'requestId' | 'retryAfterSeconds' | 'mcpPaths'>;

/** Merge the given options over the defaults, once, and check them (InvalidHttpOptionsException names the field). */
export function resolveHttpOptions(raw: Partial<ZmoduHttpModuleOptions> | undefined): ResolvedHttpOptions {
  const merged = Object.assign(new ZmoduHttpModuleOptions(), ownOptions(raw));
  for (const field of ['resolveCaller', 'requestId'] as const)
    if (typeof merged[field] !== 'function') throw new InvalidHttpOptionsException(field, 'must be a function (request) => ...');
  const permission = merged.runPermission;
  if (permission !== null && (typeof permission !== 'string' || permission.trim() === ''))
    throw new InvalidHttpOptionsException('runPermission', "must be a non-empty permission code (or null for none), e.g. 'agent:run'");
  const max = merged.maxGoalLength;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 1_000_000)
    throw new InvalidHttpOptionsException('maxGoalLength', 'must be a whole number of characters from 1 to 1000000');
  if (!['prefer', 'always', 'never'].includes(merged.runsWait as string))
    throw new InvalidHttpOptionsException('runsWait', "must be 'prefer', 'always' or 'never'");
  const { mcpPath, ...rest } = merged;
  return { ...(rest as Required<Omit<ZmoduHttpModuleOptions, 'mcpPath'>>), ...resolveFilterOptions(merged), mcpPaths: mcpPathsOf(mcpPath) };
}

/** The filter's options over their defaults, checked. */
export function resolveFilterOptions(raw: ExceptionFilterOptions | undefined): ResolvedFilterOptions {
  const given = ownOptions(raw) as ExceptionFilterOptions & { mcpPaths?: readonly string[] };
  const requestId = given.requestId ?? (() => undefined);
  if (typeof requestId !== 'function')
    throw new InvalidHttpOptionsException('requestId', 'must be a function (request) => string | undefined');
  const retryAfterSeconds = given.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
  if (typeof retryAfterSeconds !== 'number' || !Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 1 || retryAfterSeconds > 3600)
    throw new InvalidHttpOptionsException('retryAfterSeconds', 'must be a whole number of seconds from 1 to 3600');
  // The module's resolved options carry mcpPaths already (the filter is injected with them).
  const mcpPaths = given.mcpPaths ?? mcpPathsOf(given.mcpPath);
  return { requestId, retryAfterSeconds, mcpPaths };
}

function mcpPathsOf(value: unknown): readonly string[] {
  const list = value === undefined ? [] : typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string' || !p.startsWith('/')))
    throw new InvalidHttpOptionsException('mcpPath', "must be a path starting with '/' (e.g. '/mcp'), or an array of them");
  return Object.freeze(list.map((p: string) => p.toLowerCase().replace(/\/+$/, '')));
}
