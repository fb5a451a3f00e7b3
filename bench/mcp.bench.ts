import { createServer, IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Injectable, INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
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
/** Measured rounds per side, in A B B A order; the median round of each side is reported. */
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
    // No authentication in front (the raw side has none): the principal is fixed.
    McpModule.forRoot({ path: '/mcp', policy: { allow: ['bench.quote'] }, principal: () => PRINCIPAL }),
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

/** The SDK's own pattern: an McpServer and a StreamableHTTPServerTransport per session, on a bare node http server. */
async function rawSide(): Promise<Side> {
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
  const http: HttpServer = createServer((req, res) => {
    // A JSON body parser, as express.json() is on the Nest side.
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
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function clients(url: URL): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new Client({ name: 'bench', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url));
      return client;
    }),
  );
}

/** tools/call per second for `ms`: each client keeps one call in flight. */
async function throughput(pool: Client[], ms: number): Promise<number> {
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
  const ours = await oursSide();
  const raw = await rawSide();
  try {
    const oursPool = await clients(ours.url);
    const rawPool = await clients(raw.url);
    await throughput(oursPool, WARMUP_MS);
    await throughput(rawPool, WARMUP_MS);
    const oursRates: number[] = [];
    const rawRates: number[] = [];
    // Interleaved rounds (ours, raw, raw, ours, ...), so that a slow stretch of the machine hits both sides alike.
    for (let i = 0; i < ROUNDS; i++) {
      const oursFirst = i % 2 === 0;
      if (oursFirst) oursRates.push(await throughput(oursPool, ROUND_MS));
      rawRates.push(await throughput(rawPool, ROUND_MS));
      if (!oursFirst) oursRates.push(await throughput(oursPool, ROUND_MS));
    }
    await Promise.all([...oursPool, ...rawPool].map((c) => c.close()));
    const oursRate = median(oursRates);
    const rawRate = median(rawRates);
    const ratio = oursRate / rawRate;
    log(`rounds: ours ${oursRates.map(Math.round).join(' ')}; raw ${rawRates.map(Math.round).join(' ')}`);
    log(
      `mcp tools/call, concurrency ${CONCURRENCY}: zmodu McpModule ${oursRate.toFixed(0)} req/s, raw SDK ${rawRate.toFixed(0)} req/s (${ratio.toFixed(2)}x)`,
    );
    return {
      rows: [
        {
          name: `mcp tools/call over Streamable HTTP, concurrency ${CONCURRENCY}: zmodu McpModule in Nest vs raw SDK McpServer on node http (ratio = ours/raw)`,
          value: oursRate,
          unit: 'req/s',
          baseline: rawRate,
          target: { text: 'ratio >= 0.9', met: ratio >= 0.9 },
          note: 'MCP-Nest published: raw 3,961, mcp-nest 2,871 req/s (0.72x)',
        },
      ],
    };
  } finally {
    await ours.close();
    await raw.close();
  }
}
