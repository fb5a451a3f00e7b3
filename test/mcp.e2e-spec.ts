import type { AddressInfo } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
