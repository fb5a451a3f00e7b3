import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpException, Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type {
  AuthInfo,
  McpHttpHandler,
  McpRequestContext,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { GuardStats } from '@zmodu/guard/internal';
import { SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { McpCallLimiter } from './mcp-call-limiter';
import { boundToLoopback, hostAllowed, hostOf, LOOPBACK_HOSTS } from './mcp-origin';
import { McpPrincipal, principalKey } from './mcp-principal';
import { serverSdk, ServerSdk } from './mcp-sdk';
import { createMcpSkillServer, MCP_PRINCIPAL_KEY, McpSkillServer, principalFromAuthInfo } from './mcp-skill-server';
import { clientGone, toWebRequest, writeWebResponse } from './mcp-web-http';
import { MCP_OPTIONS } from './mcp.constants';
import {
  BODY_TOO_LARGE_MESSAGE,
  HOST_FORBIDDEN_MESSAGE,
  NO_PRINCIPAL_IN_REQUEST_MESSAGE,
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

type McpRequest = IncomingMessage & { body?: unknown };

/** A body we could not take: its HTTP status, JSON-RPC code and message. */
interface BodyProblem {
  readonly status: number;
  readonly code: number;
  readonly message: string;
}

interface Session {
  readonly id: string;
  readonly key: string;
  readonly server: McpSkillServer;
  readonly transport: WebStandardStreamableHTTPServerTransport;
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
 * The Streamable HTTP endpoint, both protocol eras on one path. A 2026-07-28 request (it carries the per-request
 * `_meta` envelope) is served statelessly: a fresh SDK server for that request alone, under the principal of that
 * request, so any instance of the app can answer it. A 2025-era client opens a session (`initialize`): one SDK server
 * and one transport per session (never shared), each bound to the tenant and user that opened it, closed on DELETE,
 * when idle, and all when the module is destroyed.
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

  private readonly sdk: ServerSdk;
  /** The SDK's entry for 2026-07-28 requests (stateless; 2025-era traffic never reaches it, it is ours). */
  private readonly modern: McpHttpHandler;

  constructor(
    @Inject(MCP_OPTIONS) private readonly options: ResolvedMcpOptions,
    private readonly registry: SkillRegistry,
    private readonly dispatcher: SkillDispatcher,
  ) {
    if (options.rateLimit) this.limiter = new McpCallLimiter(options.rateLimit);
    // At boot: without the SDK installed, McpModule fails here naming the package.
    this.sdk = serverSdk('McpModule');
    this.modern = this.sdk.createMcpHandler((ctx) => this.modernServer(ctx), {
      legacy: 'reject',
      maxRequestBodySize: options.maxBodyBytes,
      // A subscriptions/listen stream is held open: at most as many as sessions (the tool list never changes).
      maxSubscriptions: options.maxSessions,
      onerror: (err) => this.logger.debug(`MCP request refused or failed: ${err.message}`),
    });
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
    await this.modern.close().catch((err: unknown) => this.logger.warn(`closing the MCP handler failed: ${String(err)}`));
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
        const auth = this.options.authorization;
        const challenge =
          auth && err.getStatus() === 401 ? { 'www-authenticate': auth.challenge({ description: err.message }) } : undefined;
        return writeJsonRpcError(res, err.getStatus(), body.error.code, body.error.message, challenge);
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
    const auth = this.options.authorization;
    if (!principal) {
      const challenge = auth ? { 'www-authenticate': auth.challenge() } : undefined;
      return writeJsonRpcError(res, 401, -32000, NO_PRINCIPAL_MESSAGE(problem), challenge);
    }
    // A token minted for another service is refused (RFC 8707 audience), before anything of the request is read.
    const audience = auth?.audienceProblem(principal);
    if (audience)
      return writeJsonRpcError(res, 401, -32000, `Unauthorized: ${audience}.`, {
        'www-authenticate': auth!.challenge({ description: audience }),
      });
    let body = req.method === 'POST' ? req.body : undefined;
    if (req.method === 'POST') {
      if (body === undefined) {
        // No body parser ran: read it here, under the same limit.
        const early = this.bodyProblem(req, {});
        if (early) return refuseBody(req, res, early);
        const read = await readJsonBody(req, this.options.maxBodyBytes);
        if ('status' in read) return refuseBody(req, res, read);
        body = read.body;
      }
      const problem = this.bodyProblem(req, body) ?? this.messageProblem(body);
      if (problem) return refuseBody(req, res, problem);
    }
    const signal = clientGone(res);
    const request = toWebRequest(req, body, signal);
    // The SDK's own classification: a request with the 2026-07-28 envelope is modern, anything else 2025-era.
    const legacy = await this.isLegacy(req, request, body);
    if (!legacy) return this.serve(this.modern.fetch(request, { authInfo: authInfoOf(principal), parsedBody: body }), res, signal);
    const header = req.headers['mcp-session-id'];
    if (header !== undefined && (typeof header !== 'string' || !SESSION_ID.test(header)))
      return writeJsonRpcError(res, 400, -32000, SESSION_ID_INVALID_MESSAGE);
    if (header !== undefined) {
      const session = this.sessions.get(header);
      // Another caller's session id is answered like an unknown one: nothing tells that it exists.
      if (!session || session.key !== principalKey(principal)) return writeJsonRpcError(res, 404, -32001, SESSION_NOT_FOUND_MESSAGE);
      return this.forward(session, principal, req, request, body, res, signal);
    }
    if (req.method !== 'POST' || !this.sdk.isInitializeRequest(body))
      return writeJsonRpcError(res, 400, -32000, SESSION_ID_REQUIRED_MESSAGE);
    if (this.sessions.size + this.opening >= this.options.maxSessions)
      return writeJsonRpcError(res, 503, -32000, SESSION_CAP_MESSAGE(this.options.maxSessions));
    // One caller cannot take every session of the server (and lock the other tenants out).
    const key = principalKey(principal);
    if (this.heldBy(key) >= this.options.maxSessionsPerPrincipal)
      return writeJsonRpcError(res, 429, -32000, PRINCIPAL_SESSION_CAP_MESSAGE(this.options.maxSessionsPerPrincipal));
    return this.open(principal, req, request, body, res, signal);
  }

  /** The SDK server of one 2026-07-28 request: a session of its own, under the principal the request carried. */
  private modernServer(ctx: McpRequestContext): Server {
    const principal = principalFromAuthInfo({ http: { authInfo: ctx.authInfo } });
    if (!principal) throw new Error(NO_PRINCIPAL_IN_REQUEST_MESSAGE);
    return this.skillServer(principal).server;
  }

  /** The server of a session: a 2026 request's is its principal's; a 2025 session's reads each request's own. */
  private skillServer(principal?: McpPrincipal): McpSkillServer {
    return createMcpSkillServer({
      registry: this.registry,
      dispatcher: this.dispatcher,
      policy: this.options.policy,
      principal: principal ?? principalFromAuthInfo,
      agent: this.options.agent,
      maxCallsPerSession: this.options.maxCallsPerSession,
      limiter: this.limiter ?? false,
      stats: this.guardStats,
      serverInfo: this.options.serverInfo,
    });
  }

  /** Write the SDK's answer to the node response, as it streams. */
  private async serve(answer: Promise<Response>, res: ServerResponse, signal: AbortSignal): Promise<void> {
    await writeWebResponse(res, await answer, signal);
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
  private bodyProblem(req: McpRequest, body: unknown): BodyProblem | null {
    const limit = this.options.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return { status: 413, code: -32000, message: BODY_TOO_LARGE_MESSAGE(limit) };
    if (body === null || typeof body !== 'object') return { status: 400, code: -32700, message: PARSE_ERROR_MESSAGE };
    if (!Number.isFinite(declared) && Buffer.byteLength(JSON.stringify(body)) > limit)
      return { status: 413, code: -32000, message: BODY_TOO_LARGE_MESSAGE(limit) };
    return null;
  }

  /**
   * A body that is not one JSON-RPC message or a batch of them is a parse error, in either era (the transports check
   * each message against the schema afterwards; this is the shape, checked cheaply).
   */
  private messageProblem(body: unknown): BodyProblem | null {
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0 || !messages.every(isJsonRpcShaped)) return { status: 400, code: -32700, message: PARSE_ERROR_MESSAGE };
    return null;
  }

  /**
   * Whether a request is 2025-era: the SDK's own classification (isLegacyRequest), which is needed only when the
   * request claims the 2026 envelope somewhere (an `io.modelcontextprotocol/` key in a message's `_meta`, or a
   * 2026-or-later MCP-Protocol-Version header); a request with neither is 2025-era by the SDK's rule, decided here.
   */
  private async isLegacy(req: McpRequest, request: Request, body: unknown): Promise<boolean> {
    const version = req.headers['mcp-protocol-version'];
    const modernHeader = typeof version === 'string' ? version >= '2026' : version !== undefined;
    if (!modernHeader && !(Array.isArray(body) ? body : [body]).some(claimsEnvelope)) return true;
    return this.sdk.isLegacyRequest(request, body, { maxRequestBodySize: this.options.maxBodyBytes });
  }

  /** Sessions the caller holds, open or being opened. */
  private heldBy(key: string): number {
    let held = this.openingBy.get(key) ?? 0;
    for (const s of this.sessions.values()) if (s.key === key) held++;
    return held;
  }

  private async open(
    principal: McpPrincipal,
    req: McpRequest,
    request: Request,
    body: unknown,
    res: ServerResponse,
    signal: AbortSignal,
  ): Promise<void> {
    const key = principalKey(principal);
    this.opening++;
    this.openingBy.set(key, (this.openingBy.get(key) ?? 0) + 1);
    const server = this.skillServer();
    let session: Session | undefined;
    const transport: WebStandardStreamableHTTPServerTransport = new this.sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: (id) => {
        session = { id, key, server, transport, lastSeen: Date.now(), inflight: 0 };
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
      await this.forward(undefined, principal, req, request, body, res, signal, transport);
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
    request: Request,
    body: unknown,
    res: ServerResponse,
    signal: AbortSignal,
    transport = session?.transport,
  ): Promise<void> {
    const counted = session !== undefined && req.method === 'POST';
    if (session) session.lastSeen = Date.now();
    if (counted) session.inflight++;
    try {
      // The principal of this request reaches the tool handlers as the request's authInfo (not the bearer token).
      await this.serve(transport!.handleRequest(request, { parsedBody: body, authInfo: authInfoOf(principal) }), res, signal);
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

/** The principal as the SDK's authInfo of a request (its token is not passed on: the principal is what counts). */
function authInfoOf(principal: McpPrincipal): AuthInfo {
  return { token: '', clientId: principal.userId, scopes: [...principal.permissions], extra: { [MCP_PRINCIPAL_KEY]: principal } };
}

/** The body of a request no body parser read: at most `limit` bytes, parsed as JSON. */
async function readJsonBody(req: IncomingMessage, limit: number): Promise<{ body: unknown } | BodyProblem> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.byteLength;
    if (size > limit) return { status: 413, code: -32000, message: BODY_TOO_LARGE_MESSAGE(limit) };
    chunks.push(buffer);
  }
  try {
    return { body: JSON.parse(Buffer.concat(chunks, size).toString('utf8')) as unknown };
  } catch {
    return { status: 400, code: -32700, message: PARSE_ERROR_MESSAGE };
  }
}

/** Answer a body we will not take; the rest of an oversized one is not read (the connection is closed after the answer). */
function refuseBody(req: IncomingMessage, res: ServerResponse, problem: BodyProblem): void {
  if (problem.status === 413 && !req.readableEnded) {
    res.setHeader('connection', 'close');
    res.once('finish', () => req.destroy());
  }
  writeJsonRpcError(res, problem.status, problem.code, problem.message);
}

/** A JSON-RPC 2.0 request, notification or response, by its shape. */
function isJsonRpcShaped(message: unknown): boolean {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return false;
  if (Object.hasOwn(m, 'method')) return typeof m.method === 'string';
  return Object.hasOwn(m, 'id') && (Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error'));
}

/** Whether a message carries a key of the 2026 envelope in its `_meta`. */
function claimsEnvelope(message: unknown): boolean {
  const params = (message as { params?: unknown } | null)?.params;
  const meta = params !== null && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined;
  return meta !== null && typeof meta === 'object' && Object.keys(meta).some((key) => key.startsWith('io.modelcontextprotocol/'));
}
