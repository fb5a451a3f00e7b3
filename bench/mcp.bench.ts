import { createServer, IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Injectable, INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { GuardModule } from '@zmodu/guard';
import { McpModule } from '@zmodu/mcp';
import { Skill, SkillsModule } from '@zmodu/skills';
import { z } from 'zod';
import { consume, median } from './measure';
import { Row } from './report';

/** In-flight tools/call at once: MCP-Nest's published figures are at concurrency 10 (raw SDK 3,961 req/s, mcp-nest 2,871). */
const CONCURRENCY = 10;
const WARMUP_MS = 3000;
const ROUND_MS = 1500;
/** Measured rounds per side, the sides in a rotating order; the median round of each side is reported. */
const ROUNDS = 8;
const PRINCIPAL = Object.freeze({ tenantId: 'bench', userId: 'bench', permissions: [] as string[] });

/** The same trivial tool on both sides: { symbol } in, { symbol, price } out. */
@Injectable()
class BenchSkills {
  @Skill({
    name: 'bench.quote',
    action: 'read',
    description: 'A fixed quote',
    tenantScoped: false,
    parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'], additionalProperties: false },
  })
  quote(args: { symbol: string }) {
    return { symbol: args.symbol, price: 1 };
  }
}

@Module({
  imports: [
    GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
    SkillsModule.forRoot(),
    // No authentication in front (the raw side has none): the principal is fixed. No rate limit either (the raw side has
    // none, and the default of 600 calls a minute per caller ends the round of one fixed caller within a second).
    McpModule.forRoot({ path: '/mcp', policy: { allow: ['bench.quote'] }, principal: () => PRINCIPAL, rateLimit: false }),
  ],
  providers: [BenchSkills],
})
class BenchMcpModule {}

interface Side {
  readonly url: URL;
  close(): Promise<void>;
}

async function oursSide(): Promise<Side> {
  const app: INestApplication = await NestFactory.create(BenchMcpModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), close: () => app.close() };
}

/** The SDK's own pattern: an McpServer and a StreamableHTTPServerTransport per session. */
function rawSessions(): {
  handle: (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>;
  close: () => Promise<void>;
} {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? transports.get(id) : undefined;
    if (existing) return existing.handleRequest(req, res, body);
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(400).end();
      return;
    }
    const server = new McpServer({ name: 'raw', version: '1.0.0' });
    server.registerTool('bench.quote', { description: 'A fixed quote', inputSchema: { symbol: z.string() } }, ({ symbol }) => ({
      content: [{ type: 'text', text: JSON.stringify({ symbol, price: 1 }) }],
    }));
    servers.push(server);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void transports.set(sid, transport),
    });
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  };
  return { handle, close: async () => void (await Promise.all(servers.map((s) => s.close()))) };
}

async function listening(http: HttpServer, close: () => Promise<void>): Promise<Side> {
  if (!http.listening) await new Promise<void>((resolve) => http.once('listening', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: async () => {
      await close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The raw SDK as its documentation serves it: createMcpExpressApp (express with its JSON parser) and a route. */
async function rawExpressSide(): Promise<Side> {
  const { handle, close } = rawSessions();
  const app = createMcpExpressApp();
  app.all('/mcp', (req, res) => {
    handle(req, res, req.body).catch(() => res.headersSent || res.writeHead(500).end());
  });
  return listening(app.listen(0, '127.0.0.1'), close);
}

/** The raw SDK on a bare node http server with a minimal JSON body reader: no framework at all. */
async function rawNodeSide(): Promise<Side> {
  const { handle, close } = rawSessions();
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        res.writeHead(400).end();
        return;
      }
      handle(req, res, body).catch(() => res.headersSent || res.writeHead(500).end());
    });
  });
  http.listen(0, '127.0.0.1');
  return listening(http, close);
}

/**
 * The raw SDK v2 for 2026-07-28 clients, as its documentation serves them: `createMcpHandler` (a fresh McpServer per
 * request, stateless) behind a bare node http server, its Request and Response bridged by hand (no framework).
 */
async function rawModernSide(): Promise<Side> {
  const handler = createMcpHandler(() => {
    const server = new ModernMcpServer({ name: 'raw', version: '2.0.0' });
    server.registerTool('bench.quote', { description: 'A fixed quote', inputSchema: z.object({ symbol: z.string() }) }, ({ symbol }) => ({
      content: [{ type: 'text', text: JSON.stringify({ symbol, price: 1 }) }],
    }));
    return server;
  });
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const body = chunks.length ? Buffer.concat(chunks).toString('utf8') : undefined;
      handler
        .fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body }))
        .then(async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers));
          if (response.body) for await (const chunk of response.body) res.write(chunk);
          res.end();
        })
        .catch(() => res.headersSent || res.writeHead(500).end());
    });
  });
  http.listen(0, '127.0.0.1');
  return listening(http, () => handler.close());
}

/** One MCP client of either era: `callTool` and `close` are all the rounds use. */
interface BenchClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<{ isError?: unknown; content?: unknown }>;
  close(): Promise<void>;
}

/** 2026-07-28 clients (the v2 SDK pinned): no session, each call its own POST. */
async function modernClients(url: URL): Promise<BenchClient[]> {
  return Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new ModernClient({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new ModernTransport(url));
      return client as unknown as BenchClient;
    }),
  );
}

/** 2025-era clients (the v1 SDK): one session each. */
async function clients(url: URL): Promise<BenchClient[]> {
  return Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new Client({ name: 'bench', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url));
      return client as unknown as BenchClient;
    }),
  );
}

/** tools/call per second for `ms`: each client keeps one call in flight. */
async function throughput(pool: BenchClient[], ms: number): Promise<number> {
  const end = performance.now() + ms;
  let calls = 0;
  await Promise.all(
    pool.map(async (client) => {
      while (performance.now() < end) {
        const res = await client.callTool({ name: 'bench.quote', arguments: { symbol: 'ACME' } });
        if (res.isError) throw new Error(`tools/call failed: ${JSON.stringify(res.content)}`);
        calls++;
      }
    }),
  );
  consume(calls);
  return calls / (ms / 1000);
}

export async function runMcpBench(log: (line: string) => void): Promise<{ rows: Row[] }> {
  const sides = { ours: await oursSide(), express: await rawExpressSide(), node: await rawNodeSide() };
  const names = Object.keys(sides) as Array<keyof typeof sides>;
  try {
    const pools = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await clients(sides[n].url)] as const))) as Record<
      keyof typeof sides,
      BenchClient[]
    >;
    for (const n of names) await throughput(pools[n], WARMUP_MS);
    const rates: Record<keyof typeof sides, number[]> = { ours: [], express: [], node: [] };
    // Interleaved rounds in a rotating order, so that a slow stretch of the machine hits every side alike.
    for (let i = 0; i < ROUNDS; i++)
      for (let k = 0; k < names.length; k++) {
        const n = names[(i + k) % names.length];
        rates[n].push(await throughput(pools[n], ROUND_MS));
      }
    await Promise.all(names.flatMap((n) => pools[n].map((c) => c.close())));
    const rate = { ours: median(rates.ours), express: median(rates.express), node: median(rates.node) };
    for (const n of names) log(`mcp rounds ${n}: ${rates[n].map(Math.round).join(' ')}`);
    log(
      `mcp tools/call, concurrency ${CONCURRENCY}: zmodu McpModule ${rate.ours.toFixed(0)} req/s, raw SDK on express ` +
        `${rate.express.toFixed(0)} req/s (${(rate.ours / rate.express).toFixed(2)}x), on bare node http ${rate.node.toFixed(0)} req/s ` +
        `(${(rate.ours / rate.node).toFixed(2)}x)`,
    );
    const row = (peer: 'express' | 'node', what: string): Row => ({
      name: `mcp tools/call over Streamable HTTP, concurrency ${CONCURRENCY}: zmodu McpModule in Nest vs raw SDK McpServer ${what} (ratio = ours/raw)`,
      value: rate.ours,
      unit: 'req/s',
      baseline: rate[peer],
      target: { text: 'ratio >= 0.9', met: rate.ours / rate[peer] >= 0.9 },
      note: 'MCP-Nest published: raw 3,961, mcp-nest 2,871 req/s (0.72x)',
    });
    return {
      rows: [
        row('express', 'in createMcpExpressApp (its documented setup)'),
        row('node', 'on bare node http'),
        await modernRow(log, sides.ours.url),
      ],
    };
  } finally {
    for (const n of names) await sides[n].close();
  }
}

/** The 2026-07-28 era: our endpoint (stateless there) against the raw SDK v2's createMcpHandler, the v2 client on both. */
async function modernRow(log: (line: string) => void, ours: URL): Promise<Row> {
  const raw = await rawModernSide();
  try {
    const pools = { ours: await modernClients(ours), raw: await modernClients(raw.url) };
    const names = ['ours', 'raw'] as const;
    for (const n of names) await throughput(pools[n], WARMUP_MS);
    const rates: Record<(typeof names)[number], number[]> = { ours: [], raw: [] };
    for (let i = 0; i < ROUNDS; i++)
      for (let k = 0; k < names.length; k++) {
        const n = names[(i + k) % names.length];
        rates[n].push(await throughput(pools[n], ROUND_MS));
      }
    await Promise.all(names.flatMap((n) => pools[n].map((c) => c.close())));
    const rate = { ours: median(rates.ours), raw: median(rates.raw) };
    for (const n of names) log(`mcp 2026-07-28 rounds ${n}: ${rates[n].map(Math.round).join(' ')}`);
    log(
      `mcp tools/call 2026-07-28 (stateless), concurrency ${CONCURRENCY}: zmodu McpModule ${rate.ours.toFixed(0)} req/s, raw SDK v2 ` +
        `createMcpHandler on bare node http ${rate.raw.toFixed(0)} req/s (${(rate.ours / rate.raw).toFixed(2)}x)`,
    );
    return {
      name: `mcp tools/call over Streamable HTTP, 2026-07-28 (stateless), concurrency ${CONCURRENCY}: zmodu McpModule in Nest vs raw SDK v2 createMcpHandler on bare node http (ratio = ours/raw)`,
      value: rate.ours,
      unit: 'req/s',
      baseline: rate.raw,
      target: { text: 'ratio >= 0.9', met: rate.ours / rate.raw >= 0.9 },
      note: 'a fresh SDK server per request on both sides',
    };
  } finally {
    await raw.close();
  }
}
