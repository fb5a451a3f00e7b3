import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AgentAuditLog } from '@zmodu/guard';
import { FixtureApp, startFixtureApp } from './__fixtures__/mcp-app';
import { toolText as text } from './__fixtures__/tool-text';
import { McpSessions } from './mcp-sessions';

// Both protocol eras on one endpoint, with the official v2 client: a 2026-07-28 client (no initialize, no session id,
// the principal from each request's own token) next to a 2025-era one (a session bound to its principal). The
// v1-client suite (mcp.module.spec.ts) is the 2025 side as it was.

const MODERN = '2026-07-28';
const clients: Client[] = [];

interface Seen {
  readonly method: string;
  readonly sessionHeader: string | null;
  readonly answeredSession: string | null;
  readonly status: number;
}

/** The v2 client over a fetch that records each exchange; `mode` as the client's versionNegotiation takes it. */
async function connect(url: URL, token: string, mode: 'auto' | 'legacy' | { pin: typeof MODERN } = { pin: MODERN }) {
  const seen: Seen[] = [];
  const fetchAndSee = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const body = request.method === 'POST' ? ((await request.clone().json()) as { method?: string }) : {};
    const response = await fetch(request);
    seen.push({
      method: body.method ?? request.method,
      sessionHeader: request.headers.get('mcp-session-id'),
      answeredSession: response.headers.get('mcp-session-id'),
      status: response.status,
    });
    return response;
  };
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: fetchAndSee,
  });
  const client = new Client({ name: 'eras-spec', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(transport);
  clients.push(client);
  return { client, transport, seen };
}

/** A raw 2026-07-28 request: the per-request `_meta` envelope and the headers the transport mirrors it in. */
async function modernPost(url: URL, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope } }),
  });
  const body = await res.text();
  return { status: res.status, headers: res.headers, body: body ? (JSON.parse(body) as Record<string, never>) : null };
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
});

describe('McpModule serves both protocol eras on one endpoint', () => {
  let fixture: FixtureApp;

  beforeAll(async () => {
    fixture = await startFixtureApp();
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('serves a 2026-07-28 client statelessly: no initialize, no session id, the caller of every request from its own token', async () => {
    const sessions = fixture.app.get(McpSessions);
    const before = sessions.stats().open;
    const { client, seen } = await connect(fixture.url, 'alice-token');
    expect(client.getProtocolEra()).toBe('modern');
    const { tools } = await client.listTools();
    // The same list as a 2025 session gets: the policy and the caller's permissions (mcp.module.spec.ts).
    expect(tools.map((t) => t.name)).toEqual(['desk.whoami', 'notes.list', 'order.draft', 'order.quote']);
    expect(tools.find((t) => t.name === 'order.quote')?.annotations).toEqual({ readOnlyHint: true, destructiveHint: false });
    const quote = await client.callTool({ name: 'order.quote', arguments: { symbol: 'ACME', qty: 3 } });
    expect(quote.structuredContent).toEqual({ symbol: 'ACME', qty: 3, amount: 300 });
    const notes = await client.callTool({ name: 'notes.list', arguments: {} });
    expect(JSON.parse(text(notes))).toEqual({ tenantId: 'acme', notes: ['acme: buy low'] });

    expect(seen.map((s) => s.method)).toEqual(['server/discover', 'tools/list', 'tools/call', 'tools/call']);
    expect(seen.every((s) => s.status === 200 && s.sessionHeader === null && s.answeredSession === null)).toBe(true);
    expect(sessions.stats().open).toBe(before); // nothing held between requests

    // Audited under the caller, each request its own run (there is no session to span them).
    const audit = fixture.app.get(AgentAuditLog);
    await audit.flush();
    const rows = (await audit.query({ agent: 'mcp' })).filter((r) => r.skill === 'order.quote' || r.skill === 'notes.list');
    expect(rows.map((r) => [r.skill, r.tenantId, r.userId])).toEqual(
      expect.arrayContaining([
        ['order.quote', 'acme', 'alice'],
        ['notes.list', 'acme', 'alice'],
      ]),
    );
    expect(new Set(rows.map((r) => r.runId)).size).toBe(rows.length);
  });

  it('answers each 2026 request under the token it carries: fewer permissions list less, another tenant sees its own data', async () => {
    const readonly = await modernPost(fixture.url, 'tools/list', {}, { Authorization: 'Bearer alice-readonly-token' });
    expect(readonly.status).toBe(200);
    expect((readonly.body!.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'desk.whoami',
      'notes.list',
      'order.quote',
    ]);
    const draft = await modernPost(
      fixture.url,
      'tools/call',
      { name: 'order.draft', arguments: { symbol: 'ACME', qty: 1 } },
      { Authorization: 'Bearer alice-readonly-token' },
    );
    expect(JSON.parse(text(draft.body!.result))).toEqual({
      error: 'PermissionDenied',
      reason: 'missing_permission',
      permission: 'order:draft',
    });
    // Gina (tenant globex) with a header naming acme and another caller's session id: her own tenant, no session.
    const alice = await connect(fixture.url, 'alice-token', 'legacy');
    const gina = await modernPost(
      fixture.url,
      'tools/call',
      { name: 'notes.list', arguments: {} },
      { Authorization: 'Bearer gina-token', 'x-tenant-id': 'acme', 'mcp-session-id': alice.transport.sessionId! },
    );
    expect(JSON.parse(text(gina.body!.result))).toEqual({ tenantId: 'globex', notes: ['globex: secret plan'] });
    expect(gina.headers.get('mcp-session-id')).toBeNull();
    // An argument cannot name a tenant either.
    const byArgs = await modernPost(
      fixture.url,
      'tools/call',
      { name: 'notes.list', arguments: { tenantId: 'acme' } },
      { Authorization: 'Bearer gina-token' },
    );
    expect(JSON.parse(text(byArgs.body!.result))).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/tenantId' }] });
  });

  it('keeps every protection for 2026 requests: 401 without a caller, 403 for a foreign Origin, refusals with reasons, bad input as JSON-RPC errors', async () => {
    const anonymous = await modernPost(fixture.url, 'tools/list', {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body!.error).toMatchObject({ code: -32000, message: expect.stringMatching(/^Unauthorized/) });
    const rebound = await modernPost(fixture.url, 'tools/list', {}, { Authorization: 'Bearer alice-token', Origin: 'http://evil.example' });
    expect(rebound.status).toBe(403);
    expect(rebound.body!.error).toMatchObject({ message: expect.stringMatching(/DNS rebinding protection/) });

    const { client } = await connect(fixture.url, 'alice-token');
    const cancel = await client.callTool({ name: 'order.cancel', arguments: {} });
    expect(JSON.parse(text(cancel))).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
    const staged = await client.callTool({ name: 'order.submit', arguments: { symbol: 'ACME', qty: 1 } });
    expect(JSON.parse(text(staged))).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
    const bad = await client.callTool({ name: 'order.quote', arguments: { symbol: 'ACME', qty: 0 } });
    expect(JSON.parse(text(bad))).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/qty' }] });

    // A revision the endpoint does not serve, and an envelope that disagrees with its header: the SDK's answers.
    const future = await modernPost(
      fixture.url,
      'tools/list',
      {},
      { Authorization: 'Bearer alice-token', 'mcp-protocol-version': '2099-01-01' },
    );
    expect(future.status).toBe(400);
    expect(future.body!.error).toMatchObject({ code: expect.any(Number) });
  });

  it('still opens a session for a 2025-era client of the v2 SDK, and finds the modern era in auto mode', async () => {
    const sessions = fixture.app.get(McpSessions);
    const legacy = await connect(fixture.url, 'alice-token', 'legacy');
    expect(legacy.client.getProtocolEra()).toBe('legacy');
    expect(legacy.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(legacy.seen[0]).toMatchObject({ method: 'initialize', answeredSession: legacy.transport.sessionId });
    expect(sessions.stats().open).toBeGreaterThan(0);
    expect(JSON.parse(text(await legacy.client.callTool({ name: 'desk.whoami', arguments: {} })))).toEqual({
      tenantId: 'acme',
      userId: 'alice',
    });
    const auto = await connect(fixture.url, 'bob-token', 'auto');
    expect(auto.client.getProtocolEra()).toBe('modern');
    expect(JSON.parse(text(await auto.client.callTool({ name: 'desk.whoami', arguments: {} })))).toEqual({
      tenantId: 'acme',
      userId: 'bob',
    });
  });
});

describe('McpModule limits for 2026-07-28 requests (there is no session: they count per caller)', () => {
  let fixture: FixtureApp | undefined;

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('spends the caller rate limit per request: past it a call is a JSON-RPC error and never runs, another caller is not held back', async () => {
    fixture = await startFixtureApp({ forRoot: { rateLimit: { limit: 3, windowMs: 60_000 } } });
    const { client } = await connect(fixture.url, 'alice-token');
    for (let i = 0; i < 3; i++) expect((await client.callTool({ name: 'desk.whoami', arguments: {} })).isError).toBeFalsy();
    await expect(client.callTool({ name: 'desk.whoami', arguments: {} })).rejects.toThrow(
      /Too many requests: at most 3 MCP calls per 60 s per caller/,
    );
    const raw = await modernPost(
      fixture.url,
      'tools/call',
      { name: 'desk.whoami', arguments: {} },
      { Authorization: 'Bearer alice-token' },
    );
    expect(raw.body!.error).toMatchObject({ code: -32000, data: { reason: 'rate_limited', retryAfterSeconds: expect.any(Number) } });
    // A 2025 session of the same caller shares the count.
    const session = await connect(fixture.url, 'alice-token', 'legacy');
    await expect(session.client.callTool({ name: 'desk.whoami', arguments: {} })).rejects.toThrow(/Too many requests/);
    const gina = await connect(fixture.url, 'gina-token');
    expect(JSON.parse(text(await gina.client.callTool({ name: 'desk.whoami', arguments: {} })))).toEqual({
      tenantId: 'globex',
      userId: 'gina',
    });
    const audit = fixture.app.get(AgentAuditLog);
    await audit.flush();
    expect((await audit.query({ agent: 'mcp' })).filter((r) => r.userId === 'alice')).toHaveLength(3);
  });

  it('refuses an oversized 2026 body with 413 before any server is made', async () => {
    fixture = await startFixtureApp({ forRoot: { maxBodyBytes: 2048 } });
    const big = await modernPost(
      fixture.url,
      'tools/call',
      { name: 'desk.whoami', arguments: { pad: 'x'.repeat(4000) } },
      { Authorization: 'Bearer alice-token' },
    );
    expect(big.status).toBe(413);
  });
});
