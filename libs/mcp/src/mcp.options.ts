import type { IncomingMessage } from 'node:http';
import { Guard, GuardPolicy } from '@zmodu/guard';
import { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';
import { DEFAULT_MCP_RATE_LIMIT, McpRateLimit, rateLimitProblem } from './mcp-call-limiter';
import { HostRule, normalizeOrigin, parseHost } from './mcp-origin';
import { McpAuthorizationOptions, ResolvedMcpAuthorization } from './mcp-authorization';
import { McpCaller, McpPrincipal, readPrincipal } from './mcp-principal';
import { INVALID_OPTION_MESSAGE } from './mcp.messages';

/** Reads the caller of one HTTP request, as the application's authentication established it. */
export type McpPrincipalResolver = (req: IncomingMessage & { user?: unknown }) => unknown | Promise<unknown>;

/** What `McpModule.forRoot` / `forRootAsync` take. */
export interface McpModuleOptions {
  /** The policy of every MCP session: which skills may be listed and called. Required (there is no default allow list). */
  readonly policy: GuardPolicy;
  /**
   * The caller of each request: `{ tenantId, userId, permissions }`, or null/undefined when there is none (401).
   * Default: `req.user`, as an authentication guard sets it. Called on every request, not only at initialize.
   */
  readonly principal?: McpPrincipalResolver;
  /** Open sessions at most; an initialize past it is answered 503. Default 1000. */
  readonly maxSessions?: number;
  /** Open sessions one caller (tenant and user) may hold; an initialize past it is answered 429. Default 10. */
  readonly maxSessionsPerPrincipal?: number;
  /** A session with no request for this long is closed (ms). Default 15 minutes. */
  readonly sessionIdleMs?: number;
  /** Largest request body, in bytes. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** At most this many tools/call per session (then `denied_turn_cap`). Default: no cap. */
  readonly maxCallsPerSession?: number;
  /**
   * MCP calls (tools/call and tools/list) per caller (tenant and user) per window, across its sessions: every JSON-RPC
   * request of a batch counts, and one past the limit is answered with a JSON-RPC error (code -32000, data
   * `{ reason: 'rate_limited', retryAfterSeconds }`). Default { limit: 600, windowMs: 60000 }; false for none.
   */
  readonly rateLimit?: McpRateLimit | false;
  /**
   * Origins (`scheme://host[:port]`) whose web pages may call the endpoint. A request whose Origin header is neither
   * listed nor the origin of an allowed Host is answered 403 (DNS rebinding protection); a request with no Origin (a
   * non-browser client) passes. Default none.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * The Host header values the endpoint answers (`api.example.com`, `api.example.com:8443`, `[::1]`; `'*'` for any);
   * any other is 403. Default: when the server listens on a loopback address, `localhost`, `127.0.0.1` and `[::1]` on
   * any port; else any host (list the names the app is served under, or put it behind a proxy that checks them).
   */
  readonly allowedHosts?: readonly string[];
  /** The agent name of MCP calls in audit entries and the token quota. Default 'mcp'. */
  readonly agent?: string;
  /** Name and version reported at initialize. Default { name: 'zmodu', version: '0.1.0' }. */
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /**
   * MCP authorization: the endpoint as an OAuth 2.1 resource server. Every 401 on it carries
   * `WWW-Authenticate: Bearer resource_metadata="..."`, the protected resource metadata (RFC 9728) is served at
   * `/.well-known/oauth-protected-resource` + the resource's path and names `authorizationServers`, and a token whose
   * audience (the principal's `audience`, from the token the app verified) does not name `resource` is refused (401
   * invalid_token). The token itself is still checked by the application. Default: none of it.
   */
  readonly authorization?: McpAuthorizationOptions;
}

/** The extras of `forRoot`/`forRootAsync`: where the endpoint is mounted (static, it names a route). */
export interface McpModuleExtras {
  /** The route of the Streamable HTTP endpoint (POST, GET, DELETE). Default '/mcp'. */
  readonly path: string;
}

export const DEFAULT_MCP_PATH = '/mcp';

/** McpModuleOptions with every default applied, checked once when the module starts. */
export class ResolvedMcpOptions {
  readonly policy: GuardPolicy;
  /** The caller of a request: its principal, or why it has none (a 401 says it). The resolver is called once. */
  readonly caller: (req: IncomingMessage & { user?: unknown }) => Promise<McpCaller>;
  readonly principal: (req: IncomingMessage & { user?: unknown }) => Promise<McpPrincipal | null>;
  readonly maxSessions: number = 1000;
  readonly maxSessionsPerPrincipal: number = 10;
  readonly sessionIdleMs: number = 15 * 60_000;
  readonly maxBodyBytes: number = 1024 * 1024;
  readonly maxCallsPerSession?: number;
  readonly rateLimit: McpRateLimit | false = DEFAULT_MCP_RATE_LIMIT;
  readonly allowedOrigins: ReadonlySet<string> = new Set();
  /** The allowed hosts; null for any; undefined for the default (the loopback names when bound to loopback). */
  readonly allowedHosts?: readonly HostRule[] | null;
  readonly agent: string = 'mcp';
  readonly serverInfo: { readonly name: string; readonly version: string } = { name: 'zmodu', version: '0.1.0' };
  readonly authorization?: ResolvedMcpAuthorization;

  constructor(raw: McpModuleOptions) {
    if (raw === null || typeof raw !== 'object')
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('options', 'must be an object'));
    const own = <K extends keyof McpModuleOptions>(k: K): McpModuleOptions[K] | undefined => (Object.hasOwn(raw, k) ? raw[k] : undefined);
    const policy = own('policy');
    if (!policy || typeof policy !== 'object' || !Array.isArray(policy.allow))
      throw new InvalidMcpOptionsException(
        INVALID_OPTION_MESSAGE('policy', "is required: { allow: ['skill.name', ...], allowExecute?: boolean, deny?, budget? }"),
      );
    try {
      new Guard(policy); // the same checks as an agent's policy, at boot rather than at the first session
    } catch (err) {
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('policy', (err as Error).message));
    }
    this.policy = policy;
    const resolver = own('principal');
    if (resolver !== undefined && typeof resolver !== 'function')
      throw new InvalidMcpOptionsException(
        INVALID_OPTION_MESSAGE('principal', 'must be a function (req) => { tenantId, userId, permissions }'),
      );
    const read: McpPrincipalResolver = resolver ?? ((req) => req.user);
    this.caller = async (req) => readPrincipal(await read(req));
    this.principal = async (req) => (await this.caller(req)).principal;
    this.maxSessions = positiveInteger('maxSessions', own('maxSessions')) ?? this.maxSessions;
    this.maxSessionsPerPrincipal =
      positiveInteger('maxSessionsPerPrincipal', own('maxSessionsPerPrincipal')) ?? this.maxSessionsPerPrincipal;
    this.sessionIdleMs = positiveInteger('sessionIdleMs', own('sessionIdleMs')) ?? this.sessionIdleMs;
    this.maxBodyBytes = positiveInteger('maxBodyBytes', own('maxBodyBytes')) ?? this.maxBodyBytes;
    this.maxCallsPerSession = positiveInteger('maxCallsPerSession', own('maxCallsPerSession'));
    const rateLimit = own('rateLimit');
    const rateProblem = rateLimit === undefined ? null : rateLimitProblem(rateLimit);
    if (rateProblem) throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('rateLimit', rateProblem));
    this.rateLimit =
      rateLimit === undefined ? this.rateLimit : rateLimit === false ? false : { limit: rateLimit.limit, windowMs: rateLimit.windowMs };
    this.allowedOrigins = new Set(list('allowedOrigins', own('allowedOrigins'), normalizeOrigin));
    const hosts = own('allowedHosts');
    if (hosts !== undefined) {
      const rules = list('allowedHosts', hosts, parseHost);
      this.allowedHosts = rules.includes(null) ? null : (rules as HostRule[]);
    }
    const agent = own('agent');
    if (agent !== undefined && (typeof agent !== 'string' || agent === ''))
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('agent', 'must be a non-empty string'));
    this.agent = agent ?? this.agent;
    this.serverInfo = own('serverInfo') ?? this.serverInfo;
    const authorization = own('authorization');
    if (authorization !== undefined) this.authorization = new ResolvedMcpAuthorization(authorization);
  }
}

function list<T>(name: string, value: unknown, parse: (item: unknown) => T): T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE(name, 'must be an array of strings'));
  return value.map((item, i) => {
    try {
      return parse(item);
    } catch (err) {
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE(`${name}[${i}]`, (err as Error).message));
    }
  });
}

function positiveInteger(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
    throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE(name, 'must be a positive integer'));
  return value;
}
