import { createServer, type AddressInfo } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { AgentAuditLog } from '@zmodu/guard';
import { AppModule } from '../apps/sample/src/app.module';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { toolText as text } from '../libs/mcp/src/__fixtures__/tool-text';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

describe('the sample over MCP (Streamable HTTP at /mcp, behind its JWT auth)', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let url: URL;
  const clients: Client[] = [];
  const token = (over: { tenant?: string; user?: string; permissions?: string[] } = {}) =>
    mintToken(SECRET, { tenant: over.tenant ?? 'acme', user: over.user ?? 'alice', permissions: over.permissions });

  async function connect(bearer: string, sessionId?: string, headers: Record<string, string> = {}) {
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { ...headers, Authorization: `Bearer ${bearer}` } },
      sessionId,
    });
    const client = new Client({ name: 'sample-e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  async function post(body: string, headers: Record<string, string>) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
    return { status: res.status, body: JSON.parse(await res.text()) };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    // The app as main.ts makes it (NestFactory), listening on a free port: the MCP client needs a URL.
    app = await NestFactory.create(AppModule.register({ dataSource: () => db.options(), jwtSecret: SECRET }), { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    url = new URL(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/mcp`);
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers 401 as a JSON-RPC error without a valid token, and the official client cannot connect', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const anonymous = await post(init, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: expect.stringMatching(/Missing bearer token/) },
    });
    const forged = mintToken('another-secret-which-is-also-long-enough-000000', { tenant: 'acme', user: 'mallory' });
    await expect(connect(forged)).rejects.toThrow(/401|signature/);
  });

  it('answers malformed JSON with a JSON-RPC parse error', async () => {
    const res = await post('{"jsonrpc": "2.0", "method": ', { Authorization: `Bearer ${token()}` });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32700);
  });

  it('lists the MCP policy filtered by the token permissions, read skills annotated read-only', async () => {
    const analyst = await connect(token({ permissions: ['market:read'] }));
    const tools = (await analyst.client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(['db.query', 'entity.list', 'entity.lookup', 'market.quote']);
    expect(tools.every((t) => t.annotations?.readOnlyHint === true && t.annotations?.destructiveHint === false)).toBe(true);
    expect(tools.find((t) => t.name === 'market.quote')?.inputSchema).toMatchObject({ required: ['symbol'] });

    const trader = await connect(token());
    const names = (await trader.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['db.query', 'entity.list', 'entity.lookup', 'market.quote', 'order.draft']);
    // Never listed: approval.submit (not in the MCP policy), order.submit (staged), admin skills.
    expect(names).not.toContain('order.submit');
  });

  it("calls market.quote in the caller's tenant, and audits it under the caller", async () => {
    const acme = await connect(token(), undefined, { 'x-tenant-id': 'globex' });
    const res = await acme.client.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } });
    expect(res.isError).toBeFalsy();
    expect(JSON.parse(text(res))).toEqual({ symbol: 'ACME', price: 101.25, currency: 'USD' });
    const globex = await connect(token({ tenant: 'globex', user: 'gina' }));
    const theirs = await globex.client.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } });
    expect(JSON.parse(text(theirs))).toEqual({ symbol: 'ACME', price: 99.9, currency: 'EUR' });

    const audit = app.get(AgentAuditLog);
    await audit.flush();
    const rows = (await audit.query({ agent: 'mcp' })).filter((r) => r.skill === 'market.quote' && r.decision === 'allowed');
    expect(rows.map((r) => [r.tenantId, r.userId]).sort()).toEqual([
      ['acme', 'alice'],
      ['globex', 'gina'],
    ]);
  });

  it('refuses what the policy does not allow, with the reason, and names a bad argument', async () => {
    const { client } = await connect(token());
    const submit = await client.callTool({ name: 'approval.submit', arguments: {} });
    expect(submit.isError).toBe(true);
    expect(JSON.parse(text(submit))).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    const staged = await client.callTool({ name: 'order.submit', arguments: { symbol: 'ACME', side: 'buy', qty: 1 } });
    // Not listed for this caller: refused as not listed, as a name that is no skill is (nothing tells it is staged).
    expect(JSON.parse(text(staged))).toMatchObject({ error: 'ToolDenied', reason: 'denied_not_listed' });
    const bad = await client.callTool({ name: 'market.quote', arguments: { symbol: 'acme' } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse(text(bad))).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/symbol' }] });
  });

  it("refuses another user's or another tenant's token on a session, telling nothing of it", async () => {
    const alice = await connect(token());
    const sessionId = alice.transport.sessionId!;
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'market.quote', arguments: { symbol: 'ACME' } },
    });
    for (const other of [token({ user: 'bob' }), token({ tenant: 'globex', user: 'alice' })]) {
      const res = await post(call, { Authorization: `Bearer ${other}`, 'mcp-session-id': sessionId });
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: -32001, message: expect.stringMatching(/^Session not found/) });
      const intruder = await connect(other, sessionId);
      await expect(intruder.client.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } })).rejects.toThrow(
        /404|Session not found/,
      );
    }
    expect(JSON.parse(text(await alice.client.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } }))).price).toBe(101.25);
  });
});

describe('the sample over MCP: the rate limit counts calls, not HTTP requests', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let url: URL;

  beforeAll(async () => {
    db = await createTestDatabase();
    const options = { dataSource: () => db.options(), jwtSecret: SECRET, edge: { rateLimit: 8, rateWindowMs: 60_000 } };
    app = await NestFactory.create(AppModule.register(options), { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    url = new URL(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/mcp`);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers a batch of 20 tools/call in one request with 8 results and 12 rate-limit errors (attack: a batch counted as one request)', async () => {
    const bearer = mintToken(SECRET, { tenant: 'acme', user: 'alice' });
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } });
    const client = new Client({ name: 'sample-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const batch = Array.from({ length: 20 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'market.quote', arguments: { symbol: 'ACME' } },
      }));
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${bearer}`,
          'mcp-session-id': transport.sessionId!,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify(batch),
      });
      expect(res.status).toBe(200);
      const answers = (await res.text())
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as { id: number; result?: unknown; error?: { data?: { reason?: string } } });
      expect(answers).toHaveLength(20);
      expect(answers.filter((a) => a.result).map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(answers.filter((a) => a.error?.data?.reason === 'rate_limited')).toHaveLength(12);
      const audit = app.get(AgentAuditLog);
      await audit.flush();
      // The refused calls never ran: only the 8 reached the dispatcher.
      expect((await audit.query({ agent: 'mcp' })).filter((r) => r.skill === 'market.quote')).toHaveLength(8);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});

describe('two instances of the sample on one database: a 2026-07-28 client whose requests alternate between them', () => {
  let db: TestDatabase;
  const apps: INestApplication[] = [];
  const ports: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // Two Nest apps on one database, as two processes behind a load balancer would be (one set of options: one PGlite).
    const options = await db.options();
    for (const seed of [true, false]) {
      const app = await NestFactory.create(AppModule.register({ dataSource: async () => options, jwtSecret: SECRET, seed }), {
        logger: ['error'],
      });
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      ports.push((app.getHttpServer().address() as AddressInfo).port);
    }
  });

  afterAll(async () => {
    // Embedded, both apps share one PGlite (and its pool): write every audit entry before the first close ends it.
    await Promise.all(apps.map((app) => app.get(AgentAuditLog).flush()));
    for (const app of apps.reverse()) await app.close();
    await db?.drop();
  });

  it('answers every request on whichever instance it reaches: no session to stick to, the caller from each request', async () => {
    // The "load balancer": each request of the client goes to the other port than the one before.
    const served: number[] = [];
    let next = 0;
    const alternating = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      url.port = String(ports[next++ % ports.length]);
      served.push(Number(url.port));
      const response = await fetch(new Request(url, request));
      expect(response.headers.get('mcp-session-id')).toBeNull();
      return response;
    };
    const connect = async (bearer: string) => {
      const transport = new ModernTransport(new URL(`http://127.0.0.1:${ports[0]}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
        fetch: alternating,
      });
      const client = new ModernClient({ name: 'lb-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(transport);
      return client;
    };
    const acme = await connect(mintToken(SECRET, { tenant: 'acme', user: 'alice', permissions: ['market:read'] }));
    const globex = await connect(mintToken(SECRET, { tenant: 'globex', user: 'gina', permissions: ['market:read'] }));
    try {
      expect(acme.getProtocolEra()).toBe('modern');
      expect((await acme.listTools()).tools.map((t) => t.name)).toEqual(['db.query', 'entity.list', 'entity.lookup', 'market.quote']);
      const prices: number[] = [];
      for (let i = 0; i < 6; i++) {
        const [mine, theirs] = [
          await acme.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } }),
          await globex.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } }),
        ];
        prices.push(JSON.parse(text(mine)).price, JSON.parse(text(theirs)).price);
      }
      // Each tenant's own desk on both instances: acme quotes in USD (101.25), globex in EUR (99.9).
      expect(prices).toEqual(Array.from({ length: 6 }, () => [101.25, 99.9]).flat());
      // Both instances served, each about half (discover, list and 12 calls, alternating).
      expect(new Set(served)).toEqual(new Set(ports));
      for (const port of ports) expect(served.filter((p) => p === port).length).toBeGreaterThanOrEqual(7);

      // One audit, in the shared database: every call under its caller, whichever instance ran it.
      const audits = apps.map((app) => app.get(AgentAuditLog));
      await Promise.all(audits.map((a) => a.flush()));
      const rows = (await audits[1].query({ agent: 'mcp' })).filter((r) => r.skill === 'market.quote' && r.decision === 'allowed');
      expect(rows).toHaveLength(12);
      expect(rows.filter((r) => r.tenantId === 'acme' && r.userId === 'alice')).toHaveLength(6);
      expect(rows.filter((r) => r.tenantId === 'globex' && r.userId === 'gina')).toHaveLength(6);
    } finally {
      await Promise.all([acme.close(), globex.close()]);
    }
  });

  it('keeps a 2025-era session on the instance that opened it (the other one does not know it: 404)', async () => {
    const bearer = mintToken(SECRET, { tenant: 'acme', user: 'alice', permissions: ['market:read'] });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${ports[0]}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    });
    const client = new Client({ name: 'lb-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(JSON.parse(text(await client.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } }))).price).toBe(101.25);
      const elsewhere = await fetch(`http://127.0.0.1:${ports[1]}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${bearer}`,
          'mcp-session-id': transport.sessionId!,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      expect(elsewhere.status).toBe(404);
    } finally {
      await client.close();
    }
  });
});

describe('the sample over MCP with MCP authorization (its JWTs must be minted for /mcp)', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let url: URL;
  let resource: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    // The resource identifier names the port, so the port is chosen before the app listens on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    resource = `http://127.0.0.1:${port}/mcp`;
    const options = {
      dataSource: () => db.options(),
      jwtSecret: SECRET,
      mcpAuthorization: { resource, authorizationServers: ['http://127.0.0.1:1'] },
    };
    app = await NestFactory.create(AppModule.register(options), { logger: ['error'] });
    await app.listen(port, '127.0.0.1');
    url = new URL(resource);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const list = (bearer?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it("answers the JWT guard's 401 with the challenge, and serves the metadata naming the authorization server", async () => {
    const anonymous = await list();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', url)}"`,
    );
    expect(((await anonymous.json()) as { error: { message: string } }).error.message).toMatch(/Missing bearer token/);
    const metadata = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url));
    expect(await metadata.json()).toMatchObject({ resource, authorization_servers: ['http://127.0.0.1:1'] });
  });

  it('refuses a valid JWT minted for another service or for no audience (401 invalid_token), and serves one minted for /mcp in both eras', async () => {
    for (const audience of ['https://crm.example.com/api', undefined]) {
      const res = await list(mintToken(SECRET, { tenant: 'acme', user: 'alice', audience }));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    }
    const bearer = mintToken(SECRET, { tenant: 'acme', user: 'alice', permissions: ['market:read'], audience: resource });
    const legacy = new Client({ name: 'auth-e2e', version: '1.0.0' });
    await legacy.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    const modern = new ModernClient({ name: 'auth-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new ModernTransport(url, { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
    try {
      for (const client of [legacy, modern])
        expect(JSON.parse(text(await client.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } }))).price).toBe(101.25);
    } finally {
      await Promise.all([legacy.close(), modern.close()]);
    }
  });
});
