import { randomUUID } from 'node:crypto';
import type { CallToolResult, Server, Tool, ToolAnnotations, Transport } from '@modelcontextprotocol/server';
import { ActionClass, Guard, GuardPolicy } from '@zmodu/guard';
import { GuardStats } from '@zmodu/guard/internal';
import { createSkillContext, SkillCallResult, SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';
import { DEFAULT_MCP_RATE_LIMIT, McpCallLimiter, McpRateLimit, rateLimitProblem } from './mcp-call-limiter';
import { McpPrincipal, principalKey, readPrincipal, toPrincipal } from './mcp-principal';
import { serverSdk, ServerSdk } from './mcp-sdk';
import { INVALID_OPTION_MESSAGE, NO_PRINCIPAL_IN_REQUEST_MESSAGE, RATE_LIMITED_MESSAGE } from './mcp.messages';

/**
 * What a request handler of the SDK gets (its `ServerContext`), as far as the principal resolver reads it: the HTTP
 * transports pass each request's principal as `http.authInfo`; `mcpReq.signal` aborts when the request is cancelled.
 */
export interface McpRequestExtra {
  readonly http?: { readonly authInfo?: { readonly extra?: Readonly<Record<string, unknown>> } };
  readonly mcpReq?: { readonly signal?: AbortSignal };
}

/** The key under `authInfo.extra` where the HTTP transport passes each request's principal. */
export const MCP_PRINCIPAL_KEY = 'zmoduPrincipal';

export interface McpSkillServerOptions {
  readonly registry: SkillRegistry;
  readonly dispatcher: SkillDispatcher;
  /** The session's policy: what may be listed and called (allow/deny lists, allowExecute, budget). */
  readonly policy: GuardPolicy;
  /**
   * The caller: a fixed principal (stdio: one user per process), or a function that reads it from
   * each request (Streamable HTTP: from the request's `authInfo`, so it is checked on every request).
   */
  readonly principal: McpPrincipal | ((extra: McpRequestExtra) => McpPrincipal | null | undefined);
  /** The agent name in audit entries and the token quota key. Default 'mcp'. */
  readonly agent?: string;
  /** At most this many tools/call per session; later calls are refused as `denied_turn_cap`. Default: no cap. */
  readonly maxCallsPerSession?: number;
  /**
   * MCP calls (tools/call, tools/list) per caller per window: each JSON-RPC request counts, those of a batch too; one
   * past it is a JSON-RPC error (-32000, data `{ reason: 'rate_limited', retryAfterSeconds }`), never run. A limiter
   * shares one count between servers (McpModule: every session of a caller); `false` for none. Default
   * { limit: 600, windowMs: 60000 } for this server.
   */
  readonly limiter?: McpCallLimiter | McpRateLimit | false;
  /** Shared guard counters (e.g. one GuardStats for all MCP sessions). */
  readonly stats?: GuardStats;
  /** Name and version the server reports at initialize. Default { name: 'zmodu', version: '0.1.0' }. */
  readonly serverInfo?: { readonly name: string; readonly version: string };
}

const ANNOTATIONS: Readonly<Record<ActionClass, ToolAnnotations>> = Object.freeze({
  read: Object.freeze({ readOnlyHint: true, destructiveHint: false }),
  propose: Object.freeze({ readOnlyHint: false, destructiveHint: false }),
  execute: Object.freeze({ readOnlyHint: false, destructiveHint: true }),
});

/** The MCP tool annotations of an action class: read is read-only, execute destructive, propose neither. */
export function annotationsFor(action: ActionClass): ToolAnnotations {
  return { ...(Object.hasOwn(ANNOTATIONS, action) ? ANNOTATIONS[action] : ANNOTATIONS.execute) };
}

/**
 * One MCP session over the skill catalog: low-level SDK `Server`s (never shared between sessions or transports) with
 * `tools/list` filtered by the session policy and the caller's permissions, and `tools/call` through
 * `SkillDispatcher.dispatch`, like every other caller. A session is what one guard (its budget), one run id and one
 * call queue span: a 2025-era HTTP session, a stdio connection, or one 2026-07-28 HTTP request (which has no session).
 */
export class McpSkillServer {
  /** The SDK server of the session (`createSdkServer()` makes another one over the same session, for another transport). */
  readonly server: Server;
  /** The session's guard: its budget and counters span the session. */
  readonly guard: Guard;
  /** The run id of the session's audit entries. */
  readonly runId = `mcp-${randomUUID()}`;
  private calls = 0;
  private readonly limiter?: McpCallLimiter;
  /** The tail of this session's calls: the next one starts when it settles. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly sdk: ServerSdk;

  constructor(private readonly options: McpSkillServerOptions) {
    if (!(options?.registry instanceof SkillRegistry))
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('registry', 'must be the SkillRegistry'));
    if (!(options.dispatcher instanceof SkillDispatcher))
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('dispatcher', 'must be the SkillDispatcher'));
    const max = options.maxCallsPerSession;
    if (max !== undefined && !(Number.isInteger(max) && max > 0))
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('maxCallsPerSession', 'must be a positive integer'));
    const fixed = typeof options.principal === 'function' ? null : readPrincipal(options.principal).problem;
    if (fixed)
      throw new InvalidMcpOptionsException(
        INVALID_OPTION_MESSAGE('principal', `must be { tenantId, userId, permissions } with tenant and user ids, or a function (${fixed})`),
      );
    const limit = options.limiter ?? DEFAULT_MCP_RATE_LIMIT;
    if (limit instanceof McpCallLimiter) this.limiter = limit;
    else {
      const problem = rateLimitProblem(limit);
      if (problem) throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE('limiter', problem));
      if (limit) this.limiter = new McpCallLimiter(limit);
    }
    this.guard = new Guard(options.policy, { stats: options.stats });
    this.sdk = serverSdk('createMcpSkillServer');
    this.server = this.createSdkServer();
  }

  /**
   * A new SDK server over this session (its guard, run id, call queue and limits): the SDK's serving entries connect a
   * fresh instance to each transport (stdio makes one to answer a 2026 client's probe, then the one it keeps).
   */
  createSdkServer(): Server {
    const info = this.options.serverInfo ?? { name: 'zmodu', version: '0.1.0' };
    const server = new this.sdk.Server({ name: info.name, version: info.version }, { capabilities: { tools: { listChanged: false } } });
    // Each request spends from the caller's rate limit as it arrives, in the order of its batch.
    server.setRequestHandler('tools/list', (_req, ctx) => ({ tools: this.listTools(this.spend(this.principalOf(ctx))) }));
    server.setRequestHandler('tools/call', (req, ctx) =>
      this.callTool(this.spend(this.principalOf(ctx)), req.params.name, req.params.arguments, ctx.mcpReq.signal),
    );
    return server;
  }

  /** The tools this principal may see: not staged, let through by the policy, and with the permission they need. */
  listTools(principal: McpPrincipal): Tool[] {
    const tools: Tool[] = [];
    for (const skill of this.options.registry.definitions()) {
      if (skill.staged) continue;
      if (!this.policyLets(skill.action, skill.name)) continue;
      if (skill.requiredPermission !== undefined && !principal.permissions.includes(skill.requiredPermission)) continue;
      tools.push({
        name: skill.name,
        description: skill.description,
        inputSchema: skill.parameters as Tool['inputSchema'],
        annotations: annotationsFor(skill.action),
      });
    }
    return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * One call through the dispatcher; a refusal or failure is a tool result with `isError: true` and the observation JSON.
   * A session's calls run one at a time, in the order they came, as an agent's do: the session budget and the tenant
   * quota are checked before a call and spent after it, so calls of one batch (or parallel POSTs) run at once would
   * each see the budget untouched.
   */
  callTool(principal: McpPrincipal, name: string, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    const run = this.queue.then(() => this.callNow(principal, name, args, signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async callNow(principal: McpPrincipal, name: string, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    const ctx = createSkillContext({
      guard: this.guard,
      tenantId: principal.tenantId,
      userId: principal.userId,
      permissions: principal.permissions,
      runId: this.runId,
      agent: this.options.agent ?? 'mcp',
      signal,
    });
    const dispatcher = this.options.dispatcher;
    const max = this.options.maxCallsPerSession;
    const result =
      max !== undefined && ++this.calls > max
        ? await dispatcher.deny(ctx, name, args, 'denied_turn_cap')
        : await dispatcher.dispatch(ctx, name, args);
    return toToolResult(result);
  }

  /** Serve the 2025-era protocol (initialize, then requests) on one SDK transport. */
  connect(transport: Transport): Promise<void> {
    return this.server.connect(transport);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** Listed when the guard would let the name through (a spent budget hides nothing: the call says denied_budget). */
  private policyLets(action: ActionClass, name: string): boolean {
    const decision = this.guard.evaluate(action, name, 0);
    return decision.allowed || decision.cause === 'denied_budget';
  }

  /** The principal, once one call of its rate limit is spent; a JSON-RPC error past the limit (the call does not run). */
  private spend(principal: McpPrincipal): McpPrincipal {
    const wait = this.limiter?.take(principalKey(principal)) ?? 0;
    if (wait === 0) return principal;
    const { limit, windowMs } = this.limiter!.rate;
    const retryAfterSeconds = Math.ceil(wait / 1000);
    throw new this.sdk.ProtocolError(-32000, RATE_LIMITED_MESSAGE(limit, windowMs, retryAfterSeconds), {
      reason: 'rate_limited',
      retryAfterSeconds,
    });
  }

  private principalOf(extra: McpRequestExtra): McpPrincipal {
    const given = typeof this.options.principal === 'function' ? this.options.principal(extra) : this.options.principal;
    const principal = toPrincipal(given);
    // Fail closed: the HTTP layer answers 401 before this, so only a miswired transport gets here.
    if (!principal) throw new this.sdk.ProtocolError(this.sdk.ProtocolErrorCode.InvalidRequest, NO_PRINCIPAL_IN_REQUEST_MESSAGE);
    return principal;
  }
}

/** Build the server of one session (stdio: one per connection; HTTP: one per Mcp-Session-Id, or per 2026 request). */
export function createMcpSkillServer(options: McpSkillServerOptions): McpSkillServer {
  return new McpSkillServer(options);
}

/** The principal the HTTP transport put in the request's authInfo. */
export function principalFromAuthInfo(extra: McpRequestExtra): McpPrincipal | null {
  const bag = extra.http?.authInfo?.extra;
  return bag && Object.hasOwn(bag, MCP_PRINCIPAL_KEY) ? toPrincipal(bag[MCP_PRINCIPAL_KEY]) : null;
}

function toToolResult(result: SkillCallResult): CallToolResult {
  const content = [{ type: 'text' as const, text: result.observation }];
  if (!result.ok) return { content, isError: true };
  const value = result.value;
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? { content, structuredContent: value as Record<string, unknown> }
    : { content };
}
