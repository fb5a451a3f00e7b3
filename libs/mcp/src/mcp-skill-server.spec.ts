import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AgentAuditLog, TokenQuota } from '@zmodu/guard';
import { InMemoryAuditLogStore, InMemoryTokenQuotaStore } from '@zmodu/guard/internal';
import { SkillDispatcher, SkillRegistry } from '@zmodu/skills';
import { PassThrough } from 'node:stream';
import { toolText } from './__fixtures__/tool-text';
import { serveMcpOverStdio } from './stdio';
import { annotationsFor, createMcpSkillServer, McpSkillServer } from './mcp-skill-server';
import { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';

/** The framework-free server (no Nest): a registry, a dispatcher and a fixed principal, over the SDK's in-memory transport. */
describe('McpSkillServer without Nest', () => {
  let registry: SkillRegistry;
  let dispatcher: SkillDispatcher;
  let audit: AgentAuditLog;
  let handlerCalls: number;
  const principal = { tenantId: 'acme', userId: 'alice', permissions: ['market:read'] };

  beforeEach(() => {
    handlerCalls = 0;
    registry = new SkillRegistry();
    audit = new AgentAuditLog(new InMemoryAuditLogStore());
    dispatcher = new SkillDispatcher(registry, audit, new TokenQuota(new InMemoryTokenQuotaStore()));
    registry.register({
      name: 'market.quote',
      action: 'read',
      description: 'quote',
      requiredPermission: 'market:read',
      cost: 10,
      parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'], additionalProperties: false },
      handler: (args, ctx) => {
        handlerCalls++;
        return { symbol: args.symbol, tenant: ctx.tenantId, user: ctx.userId, agent: ctx.agent };
      },
    });
    registry.register({ name: 'market.list', action: 'read', description: 'a list', handler: () => ['ACME', 'INIT'] });
    registry.register({
      name: 'order.kill',
      action: 'execute',
      description: 'kill',
      requiredPermission: 'order:kill',
      handler: () => ({ killed: true }),
    });
  });

  async function connected(server: McpSkillServer): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'unit', version: '1' });
    await client.connect(clientSide);
    return client;
  }

  it('maps action classes to annotations (unknown as execute)', () => {
    expect(annotationsFor('read')).toEqual({ readOnlyHint: true, destructiveHint: false });
    expect(annotationsFor('propose')).toEqual({ readOnlyHint: false, destructiveHint: false });
    expect(annotationsFor('execute')).toEqual({ readOnlyHint: false, destructiveHint: true });
    expect(annotationsFor('constructor' as never)).toEqual({ readOnlyHint: false, destructiveHint: true });
  });

  it('lists by policy and permission, and calls through the dispatcher with the principal, agent "mcp" by default', async () => {
    const server = createMcpSkillServer({
      registry,
      dispatcher,
      policy: { allow: ['market.quote', 'market.list', 'order.kill'], allowExecute: true },
      principal,
    });
    const client = await connected(server);
    // order.kill: execute class is open, but alice lacks order:kill.
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['market.list', 'market.quote']);
    const res = await client.callTool({ name: 'market.quote', arguments: { symbol: 'ACME' } });
    expect(JSON.parse(toolText(res))).toEqual({ symbol: 'ACME', tenant: 'acme', user: 'alice', agent: 'mcp' });
    expect(res.structuredContent).toEqual({ symbol: 'ACME', tenant: 'acme', user: 'alice', agent: 'mcp' });
    // An array is a value, not structured content (which must be an object).
    const list = await client.callTool({ name: 'market.list', arguments: {} });
    expect(JSON.parse(toolText(list))).toEqual(['ACME', 'INIT']);
    expect(list.structuredContent).toBeUndefined();
    const kill = await client.callTool({ name: 'order.kill', arguments: {} });
    expect(kill.isError).toBe(true);
    expect(JSON.parse(toolText(kill))).toMatchObject({ error: 'PermissionDenied', permission: 'order:kill' });
    await audit.flush();
    expect((await audit.query({ runId: server.runId })).map((e) => [e.skill, e.cause, e.agent])).toEqual(
      expect.arrayContaining([
        ['market.quote', null, 'mcp'],
        ['order.kill', 'missing_permission', 'mcp'],
      ]),
    );
    await client.close();
  });

  it("spends the session guard's budget across calls, and keeps a spent-out tool listed (the call says why)", async () => {
    const server = createMcpSkillServer({ registry, dispatcher, policy: { allow: ['market.quote'], budget: 15 }, principal });
    const client = await connected(server);
    expect(JSON.parse(toolText(await client.callTool({ name: 'market.quote', arguments: { symbol: 'A' } }))).symbol).toBe('A');
    const second = await client.callTool({ name: 'market.quote', arguments: { symbol: 'B' } });
    expect(JSON.parse(toolText(second))).toEqual({ error: 'ToolDenied', reason: 'denied_budget' });
    expect(handlerCalls).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['market.quote']);
    await client.close();
  });

  it('answers an MCP client with the redacted result (text and structuredContent): redaction is on the dispatcher, MCP gets it', async () => {
    const received: unknown[] = [];
    registry.register({
      name: 'vault.read',
      action: 'read',
      description: 'reads a vault entry',
      parameters: { type: 'object', properties: { pin: { type: 'string', 'x-sensitive': true } } },
      handler: (args) => {
        received.push(args);
        return { card: '4111-1111-1111-1111', key: 'AKIAIOSFODNN7EXAMPLE', order: '4111111111111112' };
      },
    });
    const server = createMcpSkillServer({ registry, dispatcher, policy: { allow: ['vault.read'] }, principal });
    const client = await connected(server);
    const res = await client.callTool({ name: 'vault.read', arguments: { pin: '0000' } });
    const shown = { card: '[redacted]', key: '[redacted]', order: '4111111111111112' };
    expect(JSON.parse(toolText(res))).toEqual(shown);
    expect(res.structuredContent).toEqual(shown);
    expect(received).toEqual([{ pin: '0000' }]);
    await audit.flush();
    const [entry] = await audit.query({ runId: server.runId, skill: 'vault.read' });
    expect(entry).toMatchObject({ args: { pin: '[redacted]' }, result: shown });
    await client.close();
  });

  it('refuses a request without a principal (a miswired resolver) as a JSON-RPC error, never running the handler', async () => {
    const server = createMcpSkillServer({ registry, dispatcher, policy: { allow: ['market.quote'] }, principal: () => null });
    const client = await connected(server);
    await expect(client.callTool({ name: 'market.quote', arguments: { symbol: 'A' } })).rejects.toThrow(/no principal/);
    await expect(client.listTools()).rejects.toThrow(/no principal/);
    expect(handlerCalls).toBe(0);
    await client.close();
  });

  it('over stdio, spends the same rate limit per call: past it a call is a JSON-RPC error and never runs (attack: a stdio client calling without end)', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    let tail = '';
    output.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('utf8');
      const parts = text.split('\n');
      tail = parts.pop() ?? '';
      for (const line of parts) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const session = await serveMcpOverStdio({
      registry,
      dispatcher,
      policy: { allow: ['market.quote'] },
      principal,
      limiter: { limit: 3, windowMs: 60_000 },
      input,
      output,
    });
    const send = (m: unknown) => input.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    for (let id = 1; id <= 5; id++)
      send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'market.quote', arguments: { symbol: 'A' } } });
    const end = Date.now() + 5000;
    while (lines.length < 6 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const answers = lines.filter((l) => typeof l.id === 'number' && l.id > 0);
    expect(answers.filter((a) => a.result).map((a) => a.id)).toEqual([1, 2, 3]);
    expect(answers.filter((a) => a.error).map((a) => [a.id, a.error])).toEqual(
      [4, 5].map((id) => [
        id,
        {
          code: -32000,
          message: expect.stringMatching(/Too many requests: at most 3 MCP calls per 60 s per caller .*Retry after \d+ s\./),
          data: { reason: 'rate_limited', retryAfterSeconds: expect.any(Number) },
        },
      ]),
    );
    expect(handlerCalls).toBe(3);
    await session.close();
  });

  it('checks its options when made', () => {
    const policy = { allow: [] };
    expect(() => createMcpSkillServer({ registry: {} as SkillRegistry, dispatcher, policy, principal })).toThrow(
      InvalidMcpOptionsException,
    );
    expect(() => createMcpSkillServer({ registry, dispatcher, policy, principal: { tenantId: '', userId: 'u', permissions: [] } })).toThrow(
      /principal/,
    );
    expect(() => createMcpSkillServer({ registry, dispatcher, policy, principal, maxCallsPerSession: 0 })).toThrow(/maxCallsPerSession/);
    expect(() => createMcpSkillServer({ registry, dispatcher, policy: { allow: 'x' as never }, principal })).toThrow();
    expect(() => createMcpSkillServer({ registry, dispatcher, policy, principal, limiter: { limit: 0, windowMs: 1000 } })).toThrow(
      /limiter' limit must be a whole number of calls of at least 1/,
    );
  });
});
