import type { Request as CannonRequest } from 'autocannon';
import { mintToken } from '../../apps/sample/src/auth/dev-token';

/**
 * What the load run sends to the sample: tokens of many callers, the requests of each scenario (with a check of what a
 * good answer says), pending proposals seeded through trader runs, and MCP sessions opened with the protocol's handshake.
 */

export const TENANTS = ['acme', 'globex'] as const;
type Tenant = (typeof TENANTS)[number];

/** Tokens are minted for this long (under the edge's default 24 h limit): long enough for a full run. */
const TOKEN_LIFETIME = '6h';
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

/** A request of a scenario, and how its answer is judged: a 2xx whose body `check` accepts (null), or why not. */
export interface ScenarioRequest extends CannonRequest {
  readonly check: (status: number, body: string) => string | null;
}

/** The callers: traders (agent runs; many, so the pipeline's velocity rule of 30 proposals a minute per user holds), approvers, MCP users. */
export class Callers {
  private readonly cache = new Map<string, string>();
  constructor(private readonly secret: string) {}

  token(tenant: Tenant, user: string, permissions?: string[]): string {
    const key = JSON.stringify([tenant, user, permissions ?? null]);
    let t = this.cache.get(key);
    if (!t) {
      t = mintToken(this.secret, { tenant, user, permissions, expiresIn: TOKEN_LIFETIME });
      this.cache.set(key, t);
    }
    return t;
  }

  /** The `i`-th trader of a pool of `size` per tenant (every permission, as `npm run token` mints). */
  trader(i: number, size: number): { tenant: Tenant; authorization: string } {
    const tenant = TENANTS[i % TENANTS.length];
    return { tenant, authorization: `Bearer ${this.token(tenant, `trader-${Math.floor(i / TENANTS.length) % size}`)}` };
  }

  /** An approver of the tenant (approval:decide and desk:lead only), never a proposer. */
  approver(tenant: Tenant, i = 0): string {
    return `Bearer ${this.token(tenant, `approver-${i % 8}`, ['approval:decide', 'desk:lead'])}`;
  }
}

let counter = 0;
/** A counter shared by the scenarios' setupRequest hooks (autocannon calls them for every request of every connection). */
const next = () => counter++;

function parse(body: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(body);
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A 2xx, else the status and the start of the body. */
function statusProblem(status: number, body: string): string | null {
  return status >= 200 && status < 300 ? null : `${status}: ${body.slice(0, 300)}`;
}

/** An agent run that ended on its final answer with every tool call allowed and answered. */
function checkRun(status: number, body: string, expect: RegExp): string | null {
  const problem = statusProblem(status, body);
  if (problem) return problem;
  const run = parse(body) as {
    stoppedReason?: string;
    answer?: string;
    metrics?: { toolErrors?: number; toolDeniedTotal?: number };
  } | null;
  if (!run) return `not JSON: ${body.slice(0, 200)}`;
  if (run.stoppedReason !== 'final') return `stopped: ${run.stoppedReason}`;
  if (run.metrics?.toolErrors || run.metrics?.toolDeniedTotal) return `tool errors or denials: ${JSON.stringify(run.metrics)}`;
  return expect.test(run.answer ?? '') ? null : `unexpected answer: ${String(run.answer).slice(0, 200)}`;
}

/** POST /agents/trader/runs "buy 10 ACME": quote, then approval.submit (a pending proposal for a human). */
export function traderRun(callers: Callers, pool: number, onProposal?: (p: PendingProposal) => void): ScenarioRequest {
  return {
    method: 'POST',
    path: '/agents/trader/runs',
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({ goal: 'buy 10 ACME' }),
    setupRequest: (req, context) => {
      const { tenant, authorization } = callers.trader(next(), pool);
      (context as { tenant?: Tenant }).tenant = tenant;
      return { ...req, headers: { ...req.headers, authorization } };
    },
    // The context is the connection's, kept from its setupRequest to the answer (one request in flight per connection).
    onResponse: onProposal
      ? (status, body, context) => {
          const id = status === 200 ? proposalIdOf(body) : null;
          const tenant = (context as { tenant?: Tenant }).tenant;
          if (id && tenant) onProposal({ tenant, id });
        }
      : undefined,
    check: (status, body) => checkRun(status, body, /proposed/),
  };
}

/** POST /agents/analyst/runs: market.quote and a db.query (orders by status) in one turn, then the answer. */
export function analystRun(callers: Callers, pool: number): ScenarioRequest {
  return {
    method: 'POST',
    path: '/agents/analyst/runs',
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({ goal: 'How are the desk orders doing?' }),
    setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: callers.trader(next(), pool).authorization } }),
    check: (status, body) => checkRun(status, body, /^Orders by status: \[/),
  };
}

/** GET /admin/approvals?status=pending: the newest page of the approval queue, as the console reads it. */
export function approvalsList(callers: Callers): ScenarioRequest {
  return {
    method: 'GET',
    path: '/admin/approvals?status=pending&limit=20',
    headers: { accept: 'application/json' },
    setupRequest: (req) => {
      const i = next();
      return { ...req, headers: { ...req.headers, authorization: callers.approver(TENANTS[i % TENANTS.length], i) } };
    },
    check: (status, body) => {
      const problem = statusProblem(status, body);
      if (problem) return problem;
      const page = parse(body) as { items?: unknown[]; total?: number } | null;
      return Array.isArray(page?.items) && typeof page.total === 'number' ? null : `not a page: ${body.slice(0, 200)}`;
    },
  };
}

export interface PendingProposal {
  readonly tenant: Tenant;
  readonly id: string;
}

/** The id of the pending proposal a trader run answered, or null. */
function proposalIdOf(body: string): string | null {
  const run = parse(body) as { pendingApprovals?: Array<{ proposalId?: string }> } | null;
  return run?.pendingApprovals?.[0]?.proposalId ?? null;
}

/**
 * POST /admin/approvals/:id/approve of a fresh pending proposal each time (version 1, step 0: as seeded), by an approver
 * of its tenant: the approval executes the order. `take` hands out each proposal once; null when none is left.
 */
export function approvalsDecide(callers: Callers, take: () => PendingProposal | null): ScenarioRequest {
  return {
    method: 'POST',
    path: '/admin/approvals/00000000-0000-4000-8000-000000000000/approve',
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({ reason: 'load', version: 1, step: 0 }),
    setupRequest: (req) => {
      const p = take();
      if (!p) return undefined as unknown as CannonRequest; // autocannon skips to the next request of the list
      return {
        ...req,
        path: `/admin/approvals/${p.id}/approve`,
        headers: { ...req.headers, authorization: callers.approver(p.tenant, next()) },
      };
    },
    check: (status, body) => {
      const problem = statusProblem(status, body);
      if (problem) return problem;
      const outcome = parse(body) as { status?: string } | null;
      return outcome?.status === 'executed' ? null : `not executed: ${body.slice(0, 200)}`;
    },
  };
}

/** Seed `count` pending proposals through trader runs (proposers `seed-<n>` of both tenants, 20 each: under the velocity rule). */
export async function seedProposals(url: string, callers: Callers, count: number, concurrency = 4): Promise<PendingProposal[]> {
  const out: PendingProposal[] = [];
  let issued = 0;
  const worker = async () => {
    while (issued < count) {
      const k = issued++;
      const tenant = TENANTS[k % TENANTS.length];
      const user = `seed-${seedRound}-${Math.floor(k / (20 * TENANTS.length))}`;
      const res = await fetch(`${url}/agents/trader/runs`, {
        method: 'POST',
        headers: { ...JSON_HEADERS, authorization: `Bearer ${callers.token(tenant, user)}` },
        body: JSON.stringify({ goal: 'buy 10 ACME' }),
      });
      const body = await res.text();
      const id = res.status === 200 ? proposalIdOf(body) : null;
      if (!id) throw new Error(`seeding a proposal failed: ${res.status} ${body.slice(0, 300)}`);
      out.push({ tenant, id });
    }
  };
  seedRound++;
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}
let seedRound = 0;

/** An MCP session opened over HTTP: initialize, then notifications/initialized. */
export interface McpSession {
  readonly id: string;
  readonly authorization: string;
}

export async function openMcpSessions(url: string, callers: Callers, count: number): Promise<McpSession[]> {
  const sessions: McpSession[] = [];
  for (let i = 0; i < count; i++) {
    const tenant = TENANTS[i % TENANTS.length];
    const authorization = `Bearer ${callers.token(tenant, `mcp-${i}`, ['market:read', 'order:draft'])}`;
    const init = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'zmodu-load', version: '1' } },
      }),
    });
    const id = init.headers.get('mcp-session-id');
    await init.text();
    if (init.status !== 200 || !id) throw new Error(`MCP initialize failed: ${init.status}`);
    const ack = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization, 'mcp-session-id': id },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    await ack.text();
    if (ack.status !== 202) throw new Error(`MCP notifications/initialized failed: ${ack.status}`);
    sessions.push({ id, authorization });
  }
  return sessions;
}

export async function closeMcpSessions(url: string, sessions: readonly McpSession[]): Promise<void> {
  for (const s of sessions) {
    const res = await fetch(`${url}/mcp`, { method: 'DELETE', headers: { authorization: s.authorization, 'mcp-session-id': s.id } });
    await res.text();
  }
}

/** A tools/call over the sessions in turn; the answer is an SSE message carrying a result that is not an error. */
export function mcpToolCall(sessions: readonly McpSession[], name: string, args: Record<string, unknown>, expect: RegExp): ScenarioRequest {
  return {
    method: 'POST',
    path: '/mcp',
    headers: { ...MCP_HEADERS },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    setupRequest: (req) => {
      const s = sessions[next() % sessions.length];
      return { ...req, headers: { ...req.headers, authorization: s.authorization, 'mcp-session-id': s.id } };
    },
    check: (status, body) => {
      const problem = statusProblem(status, body);
      if (problem) return problem;
      const data = /^data: (.*)$/m.exec(body)?.[1] ?? body;
      const message = parse(data) as { result?: { isError?: boolean; content?: Array<{ text?: string }> }; error?: unknown } | null;
      if (!message?.result) return `no result: ${body.slice(0, 200)}`;
      const text = message.result.content?.[0]?.text ?? '';
      if (message.result.isError) return `tool error: ${text.slice(0, 200)}`;
      return expect.test(text) ? null : `unexpected result: ${text.slice(0, 200)}`;
    },
  };
}

/** The db.query of the load run over MCP: the desk's orders by status (a GROUP BY over a table the decisions grow). */
export const DB_QUERY_SQL = 'SELECT status, count(*) AS orders, sum(qty) AS quantity FROM sample_orders GROUP BY status ORDER BY status';
