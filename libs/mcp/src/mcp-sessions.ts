import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpException, Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { GuardStats } from '@zmodu/guard';
import { SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { McpCallLimiter } from './mcp-call-limiter';
import { boundToLoopback, hostAllowed, hostOf, LOOPBACK_HOSTS } from './mcp-origin';
import { McpPrincipal, principalKey } from './mcp-principal';
import { createMcpSkillServer, MCP_PRINCIPAL_KEY, McpSkillServer, principalFromAuthInfo } from './mcp-skill-server';
import { MCP_OPTIONS } from './mcp.constants';
import {
  BODY_TOO_LARGE_MESSAGE,
  HOST_FORBIDDEN_MESSAGE,
  NO_PRINCIPAL_MESSAGE,
  ORIGIN_FORBIDDEN_MESSAGE,
  PARSE_ERROR_MESSAGE,
  PRINCIPAL_SESSION_CAP_MESSAGE,
  SESSION_CAP_MESSAGE,
  SESSION_ID_INVALID_MESSAGE,
  SESSION_ID_REQUIRED_MESSAGE,
  SESSION_NOT_FOUND_MESSAGE,
} from './mcp.messages';
import { ResolvedMcpOptions } from './mcp.options';
import { jsonRpcErrorBody, writeJsonRpcError } from './json-rpc-error';

type McpRequest = IncomingMessage & { body?: unknown; auth?: AuthInfo };

interface Session {
  readonly id: string;
  readonly key: string;
  readonly server: McpSkillServer;
  readonly transport: StreamableHTTPServerTransport;
  lastSeen: number;
  /** POSTs in flight (a tool call may run long); a GET event stream does not keep a session from idling out. */
  inflight: number;
}

const SESSION_ID = /^[\x21-\x7E]{1,128}$/;

/** Counts of the MCP endpoint, for metrics. */
export interface McpSessionStats {
  readonly open: number;
  readonly max: number;
}

/**
 * The MCP sessions of the Streamable HTTP endpoint: one SDK server and one transport per session
 * (never shared), each bound to the tenant and user that opened it, closed on DELETE, when idle,
 * and all when the module is destroyed.
 */
@Injectable()
export class McpSessions implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('McpSessions');
  private readonly sessions = new Map<string, Session>();
  /** Guard counters of every MCP session, together. */
  readonly guardStats = new GuardStats();
  private opening = 0;
  private readonly openingBy = new Map<string, number>();
  private sweeper?: NodeJS.Timeout;
  private destroyed = false;
  /** The calls of every caller, across its sessions (a batch counts each of its calls). */
  private readonly limiter?: McpCallLimiter;

  constructor(
    @Inject(MCP_OPTIONS) private readonly options: ResolvedMcpOptions,
    private readonly registry: SkillRegistry,
    private readonly dispatcher: SkillDispatcher,
  ) {
    if (options.rateLimit) this.limiter = new McpCallLimiter(options.rateLimit);
  }

  onModuleInit(): void {
    const every = Math.max(1000, Math.min(60_000, Math.floor(this.options.sessionIdleMs / 2)));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.destroyed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }

  stats(): McpSessionStats {
    return { open: this.sessions.size, max: this.options.maxSessions };
  }

  /** Close the sessions with no POST in flight and no request for `sessionIdleMs` (an open GET stream does not count). */
  sweep(now = Date.now()): void {
    for (const s of this.sessions.values()) if (s.inflight === 0 && now - s.lastSeen >= this.options.sessionIdleMs) void this.close(s.id);
  }

  /** Answer one request to the endpoint; never throws (a failure is a JSON-RPC error, or the end of the response). */
  async handle(req: McpRequest, res: ServerResponse): Promise<void> {
    try {
      await this.route(req, res);
    } catch (err) {
      // A resolver may refuse with an HttpException (e.g. 401 for a revoked token): its status and message.
      if (err instanceof HttpException && !res.headersSent) {
        const body = jsonRpcErrorBody(err.getStatus(), err.message);
        return writeJsonRpcError(res, err.getStatus(), body.error.code, body.error.message);
      }
      this.logger.error(`MCP request failed: ${(err as Error)?.stack ?? String(err)}`);
      if (!res.headersSent) writeJsonRpcError(res, 500, -32603, 'Internal error');
      else res.end();
    }
  }

  private async route(req: McpRequest, res: ServerResponse): Promise<void> {
    // DNS rebinding protection, before anything else is read (the MCP transport specification: Origin, then Host).
    const forbidden = this.originOrHostProblem(req);
    if (forbidden) return writeJsonRpcError(res, 403, -32000, forbidden);
    if (this.destroyed) return writeJsonRpcError(res, 503, -32000, 'Service Unavailable: the server is shutting down.');
    // Every request, not only initialize: the caller as the application's authentication has it now.
    const { principal, problem } = await this.options.caller(req);
    if (!principal) return writeJsonRpcError(res, 401, -32000, NO_PRINCIPAL_MESSAGE(problem));
    const header = req.headers['mcp-session-id'];
    if (header !== undefined && (typeof header !== 'string' || !SESSION_ID.test(header)))
      return writeJsonRpcError(res, 400, -32000, SESSION_ID_INVALID_MESSAGE);
    const body = req.method === 'POST' ? req.body : undefined;
    if (req.method === 'POST') {
      const problem = this.bodyProblem(req, body);
      if (problem) return writeJsonRpcError(res, problem.status, problem.code, problem.message);
    }
    if (header !== undefined) {
      const session = this.sessions.get(header);
      // Another caller's session id is answered like an unknown one: nothing tells that it exists.
      if (!session || session.key !== principalKey(principal)) return writeJsonRpcError(res, 404, -32001, SESSION_NOT_FOUND_MESSAGE);
      return this.forward(session, principal, req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return writeJsonRpcError(res, 400, -32000, SESSION_ID_REQUIRED_MESSAGE);
    if (this.sessions.size + this.opening >= this.options.maxSessions)
      return writeJsonRpcError(res, 503, -32000, SESSION_CAP_MESSAGE(this.options.maxSessions));
    // One caller cannot take every session of the server (and lock the other tenants out).
    const key = principalKey(principal);
    if (this.heldBy(key) >= this.options.maxSessionsPerPrincipal)
      return writeJsonRpcError(res, 429, -32000, PRINCIPAL_SESSION_CAP_MESSAGE(this.options.maxSessionsPerPrincipal));
    return this.open(principal, req, res, body);
  }

  /**
   * Why the request's Host or Origin is refused, or null. The Host must be an allowed one (by default, when the server
   * listens on loopback, a loopback name: a page of a rebound domain sends its own); an Origin, when there is one, must
   * be listed or be the origin of that checked Host. A request with no Origin is not a browser's, and passes.
   */
  private originOrHostProblem(req: McpRequest): string | null {
    const configured = this.options.allowedHosts;
    const rules = configured === undefined ? (boundToLoopback(req) ? LOOPBACK_HOSTS : null) : configured;
    const rawHost = req.headers.host;
    const host = typeof rawHost === 'string' ? hostOf(rawHost) : null;
    if (rules && !(host && hostAllowed(rules, host))) return HOST_FORBIDDEN_MESSAGE;
    const origin = req.headers.origin;
    if (origin === undefined) return null;
    let url: URL | undefined;
    try {
      url = typeof origin === 'string' ? new URL(origin) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return ORIGIN_FORBIDDEN_MESSAGE;
    if (this.options.allowedOrigins.has(url.origin)) return null;
    // The app's own origin: only when its Host was checked (else a rebound page's Origin matches its own Host).
    const sameOrigin = rules && host && url.hostname === host.hostname && url.port === (host.port ?? '');
    return sameOrigin ? null : ORIGIN_FORBIDDEN_MESSAGE;
  }

  /** Over the size limit: 413; parsed into something that is not a JSON-RPC message or batch: a parse error. */
  private bodyProblem(req: McpRequest, body: unknown): { status: number; code: number; message: string } | null {
    const limit = this.options.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return { status: 413, code: -32000, message: BODY_TOO_LARGE_MESSAGE(limit) };
    // No body parser ran (req.body undefined): the transport reads and parses the body itself, under the same limit.
    if (body === undefined) return null;
    if (body === null || typeof body !== 'object') return { status: 400, code: -32700, message: PARSE_ERROR_MESSAGE };
    if (!Number.isFinite(declared) && Buffer.byteLength(JSON.stringify(body)) > limit)
      return { status: 413, code: -32000, message: BODY_TOO_LARGE_MESSAGE(limit) };
    return null;
  }

  /** Sessions the caller holds, open or being opened. */
  private heldBy(key: string): number {
    let held = this.openingBy.get(key) ?? 0;
    for (const s of this.sessions.values()) if (s.key === key) held++;
    return held;
  }

  private async open(principal: McpPrincipal, req: McpRequest, res: ServerResponse, body: unknown): Promise<void> {
    const key = principalKey(principal);
    this.opening++;
    this.openingBy.set(key, (this.openingBy.get(key) ?? 0) + 1);
    const server = createMcpSkillServer({
      registry: this.registry,
      dispatcher: this.dispatcher,
      policy: this.options.policy,
      principal: principalFromAuthInfo,
      agent: this.options.agent,
      maxCallsPerSession: this.options.maxCallsPerSession,
      limiter: this.limiter ?? false,
      stats: this.guardStats,
      serverInfo: this.options.serverInfo,
    });
    let session: Session | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: (id) => {
        session = { id, key: principalKey(principal), server, transport, lastSeen: Date.now(), inflight: 0 };
        this.sessions.set(id, session);
      },
      // DELETE: the transport closes itself; forget the session and close its server.
      onsessionclosed: (id) => void this.close(id),
    });
    server.server.onclose = () => {
      if (session && this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    };
    try {
      await server.connect(transport);
      await this.forward(undefined, principal, req, res, body, transport);
    } finally {
      this.opening--;
      const left = (this.openingBy.get(key) ?? 1) - 1;
      if (left > 0) this.openingBy.set(key, left);
      else this.openingBy.delete(key);
      // A failed initialize opened nothing: close what was made for it.
      if (!session) await server.close().catch(() => undefined);
      else if (this.destroyed) await this.close(session.id);
    }
  }

  private async forward(
    session: Session | undefined,
    principal: McpPrincipal,
    req: McpRequest,
    res: ServerResponse,
    body: unknown,
    transport = session?.transport,
  ): Promise<void> {
    const counted = session !== undefined && req.method === 'POST';
    if (session) session.lastSeen = Date.now();
    if (counted) session.inflight++;
    // The principal of this request reaches the tool handlers as the request's authInfo (not the bearer token).
    req.auth = { token: '', clientId: principal.userId, scopes: [...principal.permissions], extra: { [MCP_PRINCIPAL_KEY]: principal } };
    try {
      await transport!.handleRequest(req, res, body);
    } finally {
      if (counted) {
        session.inflight--;
        session.lastSeen = Date.now();
      }
    }
  }

  private async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    try {
      await session.server.close();
    } catch (err) {
      this.logger.warn(`closing MCP session failed: ${String(err)}`);
    }
  }
}
