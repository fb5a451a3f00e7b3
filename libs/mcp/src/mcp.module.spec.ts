import { request as httpRequest } from 'node:http';
import { UnauthorizedException } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AgentAuditLog } from '@zmodu/guard';
import { FIXTURE_POLICY, FixtureApp, startFixtureApp } from './__fixtures__/mcp-app';
import { McpSessions } from './mcp-sessions';
import { toolText as text } from './__fixtures__/tool-text';

const clients: Client[] = [];

async function connect(url: URL, token: string | undefined, extraHeaders: Record<string, string> = {}, sessionId?: string) {
  const headers: Record<string, string> = { ...extraHeaders, ...(token ? { Authorization: `Bearer ${token}` } : {}) };
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers }, sessionId });
  const client = new Client({ name: 'mcp-spec', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** One JSON-RPC message over plain HTTP, as a client that does not play by the rules would send it. */
async function post(url: URL, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** One POST with headers fetch would not let us set (Host), as a browser on a rebound name sends it. */
function rawPost(url: URL, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('McpModule over Streamable HTTP, with the official MCP client', () => {
  let fixture: FixtureApp;

  beforeAll(async () => {
    fixture = await startFixtureApp();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('lists only what the policy and the caller permissions let through, with annotations from the action class', async () => {
    const { client } = await connect(fixture.url, 'alice-token');
    const { tools } = await client.listTools();
    // order.cancel: execute class closed; ops.purge: denied; admin.secret: not listed; order.submit: staged.
    expect(tools.map((t) => t.name)).toEqual(['desk.whoami', 'notes.list', 'order.draft', 'order.quote']);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('order.quote')?.annotations).toEqual({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('order.draft')?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false });
    expect(byName.get('order.quote')?.inputSchema).toEqual({
      type: 'object',
      properties: { symbol: { type: 'string', pattern: '^[A-Z]{1,6}$' }, qty: { type: 'integer', minimum: 1 } },
      required: ['symbol', 'qty'],
      additionalProperties: false,
    });

    // Same session opener, fewer permissions: order.draft (order:draft) is not even listed.
    const readonly = await connect(fixture.url, 'alice-readonly-token');
    expect((await readonly.client.listTools()).tools.map((t) => t.name)).toEqual(['desk.whoami', 'notes.list', 'order.quote']);
  });

  it('takes the permissions from every request, not only from initialize', async () => {
    const { transport } = await connect(fixture.url, 'alice-token');
    // The same session (tenant acme, user alice) under a token that now carries fewer permissions.
    const later = await connect(fixture.url, 'alice-readonly-token', {}, transport.sessionId);
    expect((await later.client.listTools()).tools.map((t) => t.name)).not.toContain('order.draft');
    const res = await later.client.callTool({ name: 'order.draft', arguments: { symbol: 'ACME', qty: 1 } });
    expect(res.isError).toBe(true);
    expect(JSON.parse(text(res))).toEqual({ error: 'PermissionDenied', reason: 'missing_permission', permission: 'order:draft' });
  });

  it('calls a skill through the dispatcher: the value as text and structured content, audited under the caller', async () => {
    const { client } = await connect(fixture.url, 'alice-token');
    const res = await client.callTool({ name: 'order.quote', arguments: { symbol: 'ACME', qty: 3 } });
    expect(res.isError).toBeFalsy();
    expect(JSON.parse(text(res))).toEqual({ symbol: 'ACME', qty: 3, amount: 300 });
    expect(res.structuredContent).toEqual({ symbol: 'ACME', qty: 3, amount: 300 });
    const audit = fixture.app.get(AgentAuditLog);
    await audit.flush();
    const rows = await audit.query({ agent: 'mcp' });
    expect(rows.some((r) => r.skill === 'order.quote' && r.decision === 'allowed' && r.tenantId === 'acme' && r.userId === 'alice')).toBe(
      true,
    );
  });

  it('answers a denied call with isError and the reason, and audits the denial', async () => {
    const { client } = await connect(fixture.url, 'alice-token');
    const cancel = await client.callTool({ name: 'order.cancel', arguments: {} });
    expect(cancel.isError).toBe(true);
    expect(JSON.parse(text(cancel))).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
    const secret = await client.callTool({ name: 'admin.secret', arguments: {} });
    expect(JSON.parse(text(secret))).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    const purge = await client.callTool({ name: 'ops.purge', arguments: {} });
    expect(JSON.parse(text(purge))).toEqual({ error: 'ToolDenied', reason: 'denied_explicitly' });
    const staged = await client.callTool({ name: 'order.submit', arguments: { symbol: 'ACME', qty: 1 } });
    expect(JSON.parse(text(staged))).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
    const audit = fixture.app.get(AgentAuditLog);
    await audit.flush();
    const denied = (await audit.query({ agent: 'mcp' })).filter((r) => r.decision === 'denied').map((r) => [r.skill, r.cause]);
    expect(denied).toEqual(
      expect.arrayContaining([
        ['order.cancel', 'denied_execute_class'],
        ['admin.secret', 'denied_not_listed'],
        ['ops.purge', 'denied_explicitly'],
      ]),
    );
  });

  it('rejects a bad argument naming the field', async () => {
    const { client } = await connect(fixture.url, 'alice-token');
    const res = await client.callTool({ name: 'order.quote', arguments: { symbol: 'ACME', qty: 0 } });
    expect(res.isError).toBe(true);
    const body = JSON.parse(text(res));
    expect(body).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/qty' }] });
    const missing = await client.callTool({ name: 'order.quote', arguments: { symbol: 'ACME' } });
    expect(text(missing)).toContain('/qty');
  });

  it("refuses a request that carries another principal's session id, telling nothing of that session", async () => {
    const alice = await connect(fixture.url, 'alice-token');
    const sessionId = alice.transport.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    // Bob (same tenant) and Gina (another tenant) with Alice's session id: the official client, then raw HTTP.
    for (const token of ['bob-token', 'gina-token']) {
      const transport = new StreamableHTTPClientTransport(fixture.url, {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        sessionId,
      });
      const intruder = new Client({ name: 'intruder', version: '1.0.0' });
      await intruder.connect(transport); // a reconnect: no initialize, the session id is reused
      clients.push(intruder);
      await expect(intruder.listTools()).rejects.toThrow(/404|Session not found/);
      const raw = await post(fixture.url, LIST, { Authorization: `Bearer ${token}`, 'mcp-session-id': sessionId });
      expect(raw.status).toBe(404);
      expect(JSON.parse(raw.text)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: expect.stringMatching(/^Session not found/) },
      });
    }
    // Alice's session is untouched.
    expect((await alice.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('keeps a session in its tenant: neither arguments nor headers switch it', async () => {
    const { client, transport } = await connect(fixture.url, 'alice-token', { 'x-tenant-id': 'globex', 'x-zmodu-tenant': 'globex' });
    const notes = await client.callTool({ name: 'notes.list', arguments: {} });
    expect(JSON.parse(text(notes))).toEqual({ tenantId: 'acme', notes: ['acme: buy low'] });
    const byArgs = await client.callTool({ name: 'notes.list', arguments: { tenantId: 'globex' } });
    expect(byArgs.isError).toBe(true);
    expect(JSON.parse(text(byArgs))).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/tenantId' }] });
    expect(text(byArgs)).not.toContain('secret plan');
    // Gina's token (tenant globex) on Alice's session: refused, not answered with globex's notes in acme's session.
    const switched = await post(
      fixture.url,
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'notes.list', arguments: {} } }),
      { Authorization: 'Bearer gina-token', 'mcp-session-id': transport.sessionId! },
    );
    expect(switched.status).toBe(404);
    expect(switched.text).not.toContain('secret plan');
    expect(switched.text).not.toContain('buy low');
  });

  it('answers 401 without a caller, a parse error for a body that is not JSON-RPC, 400 without a session', async () => {
    const anonymous = await post(fixture.url, INIT);
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text).error.message).toMatch(/^Unauthorized/);
    await expect(connect(fixture.url, undefined)).rejects.toThrow(/401|Unauthorized/);

    const auth = { Authorization: 'Bearer alice-token' };
    const notRpc = await post(fixture.url, '{"hello":"world"}', auth);
    expect(notRpc.status).toBe(400);
    const noSession = await post(fixture.url, LIST, auth);
    expect(noSession.status).toBe(400);
    expect(JSON.parse(noSession.text).error.message).toMatch(/Mcp-Session-Id/);

    const opened = await connect(fixture.url, 'alice-token');
    const garbage = await post(fixture.url, '{"jsonrpc":"2.0","method":5}', { ...auth, 'mcp-session-id': opened.transport.sessionId! });
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.text).error.code).toBe(-32700);
    const badHeader = await post(fixture.url, LIST, { ...auth, 'mcp-session-id': 'a b' });
    expect(badHeader.status).toBe(400);
  });

  it('closes a session on DELETE, and its id no longer works', async () => {
    const sessions = fixture.app.get(McpSessions);
    const before = sessions.stats().open;
    const { transport } = await connect(fixture.url, 'alice-token');
    const id = transport.sessionId!;
    expect(sessions.stats().open).toBe(before + 1);
    await transport.terminateSession();
    expect(sessions.stats().open).toBe(before);
    const after = await post(fixture.url, LIST, { Authorization: 'Bearer alice-token', 'mcp-session-id': id });
    expect(after.status).toBe(404);
  });
});

describe('McpModule limits', () => {
  let fixture: FixtureApp;

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
    await fixture?.close();
  });

  it('caps the open sessions (503), closes idle ones, and lists execute skills as destructive when the policy opens them', async () => {
    fixture = await startFixtureApp({
      forRootAsync: () => ({ maxSessions: 2, sessionIdleMs: 1000, policy: { allow: ['order.cancel', 'order.quote'], allowExecute: true } }),
    });
    const a = await connect(fixture.url, 'alice-token');
    const tools = (await a.client.listTools()).tools;
    expect(tools.map((t) => [t.name, t.annotations])).toEqual([
      ['order.cancel', { readOnlyHint: false, destructiveHint: true }],
      ['order.quote', { readOnlyHint: true, destructiveHint: false }],
    ]);
    expect(JSON.parse(text(await a.client.callTool({ name: 'order.cancel', arguments: {} })))).toEqual({ cancelled: true });
    await connect(fixture.url, 'bob-token');
    await expect(connect(fixture.url, 'gina-token')).rejects.toThrow(/503|maximum of 2/);

    const sessions = fixture.app.get(McpSessions);
    // Both sessions idle (an open GET event stream does not count): swept as of 1 s later.
    sessions.sweep(Date.now() + 1500);
    // The closes run on their own (polled, at most 5 s: a loaded machine takes longer than 50 ms).
    for (let i = 0; i < 250 && sessions.stats().open > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sessions.stats().open).toBe(0);
    await connect(fixture.url, 'gina-token');
  });

  it('caps the calls of a session as denied_turn_cap, and refuses oversized bodies with 413', async () => {
    fixture = await startFixtureApp({ forRoot: { maxCallsPerSession: 2, maxBodyBytes: 2048 } });
    const { client, transport } = await connect(fixture.url, 'alice-token');
    for (let i = 0; i < 2; i++) expect((await client.callTool({ name: 'desk.whoami', arguments: {} })).isError).toBeFalsy();
    const third = await client.callTool({ name: 'desk.whoami', arguments: {} });
    expect(JSON.parse(text(third))).toEqual({ error: 'ToolDenied', reason: 'denied_turn_cap' });
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'desk.whoami', arguments: { pad: 'x'.repeat(4000) } },
    });
    const res = await post(fixture.url, big, { Authorization: 'Bearer alice-token', 'mcp-session-id': transport.sessionId! });
    expect(res.status).toBe(413);
  });

  it.each([
    ['userId holds U+200B', 'lee\u200b', 'a zero-width space: another user who looks like lee'],
    ['userId holds U+202E', '\u202eeel', 'a right-to-left override'],
    ['userId is not in Unicode normalization form C', 'e\u0301ve', 'an unnormalised id'],
  ])('answers 401 naming the problem (%s) for a caller whose user id is %j, before any session (attack: %s)', async (problem, userId) => {
    fixture = await startFixtureApp({ forRoot: { principal: () => ({ tenantId: 'acme', userId, permissions: ['market:read'] }) } });
    const refused = await post(fixture.url, INIT);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text).error.message).toContain(`Unauthorized: the caller's ${problem}`);
    expect(fixture.app.get(McpSessions).stats().open).toBe(0);
  });

  it('answers a resolver that refuses with an HttpException with its status, and one that fails with 500, as JSON-RPC errors', async () => {
    let refuse: () => never = () => {
      throw new UnauthorizedException('token revoked');
    };
    fixture = await startFixtureApp({ forRoot: { principal: () => refuse() } });
    const revoked = await post(fixture.url, LIST, { Authorization: 'Bearer alice-token' });
    expect(revoked.status).toBe(401);
    expect(JSON.parse(revoked.text)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'token revoked' } });
    refuse = () => {
      throw new Error('resolver bug with a secret detail');
    };
    const failed = await post(fixture.url, LIST, { Authorization: 'Bearer alice-token' });
    expect(failed.status).toBe(500);
    expect(failed.text).not.toContain('secret detail');
    expect(JSON.parse(failed.text).error.code).toBe(-32603);
  });

  it('spends a batch of calls like calls one after another: one session budget, not one per call (a session runs its calls in turn)', async () => {
    const fixture = await startFixtureApp({ forRoot: { policy: { ...FIXTURE_POLICY, budget: 12 } } });
    try {
      const call = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'order.quote', arguments: { symbol: 'ACME', qty: 1 } },
      });
      const sequential = await connect(fixture.url, 'alice-token');
      let allowedOneByOne = 0;
      for (let i = 0; i < 20; i++) if (!(await sequential.client.callTool(call(i).params)).isError) allowedOneByOne++;
      const batched = await connect(fixture.url, 'alice-token');
      const res = await post(fixture.url, JSON.stringify(Array.from({ length: 20 }, (_, i) => call(i + 1))), {
        Authorization: 'Bearer alice-token',
        'mcp-session-id': batched.transport.sessionId!,
        'mcp-protocol-version': '2025-06-18',
      });
      const results = res.text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as { result?: { isError?: boolean } });
      expect(results).toHaveLength(20);
      expect(allowedOneByOne).toBeGreaterThan(0);
      expect(results.filter((r) => r.result && !r.result.isError).length).toBe(allowedOneByOne);
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      await fixture.close();
    }
  });

  it('caps the sessions one caller holds (429), so one caller cannot lock the other tenants out', async () => {
    const fixture = await startFixtureApp({ forRoot: { maxSessionsPerPrincipal: 2 } });
    try {
      await connect(fixture.url, 'bob-token');
      const second = await connect(fixture.url, 'bob-token');
      await expect(connect(fixture.url, 'bob-token')).rejects.toThrow(/429|maximum of 2 open MCP sessions per caller/);
      await connect(fixture.url, 'gina-token'); // another caller still gets in
      await second.transport.terminateSession(); // closing one lets bob open another
      await connect(fixture.url, 'bob-token');
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      await fixture.close();
    }
  });

  it('counts every call of a batch against the caller rate limit: past it those calls get the rate-limit error (attack: 100 tools/call in one HTTP request)', async () => {
    const fixture = await startFixtureApp({ forRoot: { rateLimit: { limit: 30, windowMs: 60_000 } } });
    try {
      const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'desk.whoami', arguments: {} } });
      const { transport } = await connect(fixture.url, 'alice-token');
      const res = await post(fixture.url, JSON.stringify(Array.from({ length: 100 }, (_, i) => call(i + 1))), {
        Authorization: 'Bearer alice-token',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': '2025-06-18',
      });
      const answers = res.text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map(
          (line) =>
            JSON.parse(line.slice(6)) as { id: number; result?: unknown; error?: { code: number; message: string; data?: unknown } },
        );
      expect(answers).toHaveLength(100);
      const ran = answers.filter((a) => a.result).map((a) => a.id);
      expect(ran).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      const refused = answers.filter((a) => a.error);
      expect(refused).toHaveLength(70);
      for (const r of refused)
        expect(r.error).toEqual({
          code: -32000,
          message: expect.stringMatching(/Too many requests: at most 30 MCP calls per 60 s per caller \(each call of a batch counts\)/),
          data: { reason: 'rate_limited', retryAfterSeconds: expect.any(Number) },
        });
      // Another session of the same caller shares the limit; another caller has its own.
      const again = await connect(fixture.url, 'alice-token');
      await expect(again.client.callTool({ name: 'desk.whoami', arguments: {} })).rejects.toThrow(/Too many requests/);
      const gina = await connect(fixture.url, 'gina-token');
      expect(JSON.parse(text(await gina.client.callTool({ name: 'desk.whoami', arguments: {} })))).toEqual({
        tenantId: 'globex',
        userId: 'gina',
      });
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      await fixture.close();
    }
  });

  it('closes every session when the module is destroyed', async () => {
    fixture = await startFixtureApp();
    await connect(fixture.url, 'alice-token');
    await connect(fixture.url, 'gina-token');
    const sessions = fixture.app.get(McpSessions);
    expect(sessions.stats().open).toBe(2);
    await fixture.close();
    expect(sessions.stats().open).toBe(0);
  });
});

describe('McpModule against DNS rebinding (Origin and Host, as the MCP transport requires)', () => {
  let fixture: FixtureApp;

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
    await fixture?.close();
  });

  const auth = { Authorization: 'Bearer alice-token' };

  it('answers 403 to an Origin not allowed, and to a rebound Host, on a server bound to loopback (attack: a web page rebinds its name to 127.0.0.1)', async () => {
    fixture = await startFixtureApp();
    const port = fixture.url.port;
    // A page of evil.example sends its own Origin; once rebound, its Host is evil.example too.
    for (const headers of [
      { ...auth, Origin: 'http://evil.example' },
      { ...auth, Origin: `http://evil.example:${port}`, Host: `evil.example:${port}` },
      { ...auth, Host: `evil.example:${port}` },
      { ...auth, Origin: 'null' },
    ]) {
      const res = await rawPost(fixture.url, INIT, headers);
      expect(res.status).toBe(403);
      expect(JSON.parse(res.text)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: expect.stringMatching(/^Forbidden: this request's (Origin|Host) .*DNS rebinding protection/) },
      });
    }
    // No Origin (not a browser), or the server's own origin on a loopback name: served.
    expect((await rawPost(fixture.url, INIT, auth)).status).toBe(200);
    expect((await rawPost(fixture.url, INIT, { ...auth, Origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await rawPost(fixture.url, INIT, { ...auth, Origin: `http://localhost:${port}`, Host: `localhost:${port}` })).status).toBe(200);
    // The official client sends no Origin: it connects as before.
    const { client } = await connect(fixture.url, 'alice-token');
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('takes allowedOrigins and allowedHosts', async () => {
    fixture = await startFixtureApp({
      forRoot: { allowedOrigins: ['https://app.example.com/'], allowedHosts: ['api.example.com', '127.0.0.1'] },
    });
    const port = fixture.url.port;
    expect((await rawPost(fixture.url, INIT, { ...auth, Origin: 'https://app.example.com' })).status).toBe(200);
    expect((await rawPost(fixture.url, INIT, { ...auth, Origin: 'https://app.example.com:8443' })).status).toBe(403);
    expect((await rawPost(fixture.url, INIT, { ...auth, Host: 'api.example.com' })).status).toBe(200);
    expect((await rawPost(fixture.url, INIT, { ...auth, Host: `localhost:${port}` })).status).toBe(403);
    await fixture.close();
    fixture = await startFixtureApp({ forRoot: { allowedHosts: ['*'] } });
    expect((await rawPost(fixture.url, INIT, { ...auth, Host: 'anything.example' })).status).toBe(200);
    expect((await rawPost(fixture.url, INIT, { ...auth, Host: 'anything.example', Origin: 'http://anything.example' })).status).toBe(403);
  });
});
