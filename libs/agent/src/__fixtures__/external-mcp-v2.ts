import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, McpServer, type McpRequestContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ReceivedCall } from './external-mcp-server';

/** A tool call the v2 server received, with the protocol era of the request that carried it. */
export interface EraCall extends ReceivedCall {
  readonly era: McpRequestContext['era'];
}

/**
 * A small external MCP server built with the official v2 SDK (`McpServer`), as a third party writes one today: the
 * same factory serves every request (`createMcpHandler`), 2026-07-28 requests statelessly and, unless `legacy` is
 * 'reject', 2025-era requests too (the SDK's stateless fallback). `received` is told of each call, with its era.
 */
export function createExternalMcpV2Server(ctx: McpRequestContext, received: (call: EraCall) => void): McpServer {
  const server = new McpServer({ name: 'external-weather-v2', version: '2.0.0' });
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  server.registerTool(
    'get-weather',
    { description: 'Current weather of a city.', inputSchema: z.object({ city: z.string().min(1) }), annotations: { readOnlyHint: true } },
    async ({ city }) => (received({ tool: 'get-weather', arguments: { city }, era: ctx.era }), text(JSON.stringify({ city, tempC: 19 }))),
  );
  server.registerTool(
    'send_alert',
    { description: 'Send a weather alert to every subscriber.', inputSchema: z.object({ message: z.string() }) },
    async ({ message }) => (received({ tool: 'send_alert', arguments: { message }, era: ctx.era }), text('sent')),
  );
  return server;
}

export interface ExternalMcpV2HttpServer {
  readonly url: string;
  readonly received: EraCall[];
  /** The era of every request the handler made a server for. */
  readonly eras: McpRequestContext['era'][];
  close(): Promise<void>;
}

/** The v2 server over Streamable HTTP on a local port: `createMcpHandler` behind a bare node http server. */
export async function startExternalMcpV2HttpServer(legacy: 'stateless' | 'reject' = 'stateless'): Promise<ExternalMcpV2HttpServer> {
  const received: EraCall[] = [];
  const eras: McpRequestContext['era'][] = [];
  const handler = createMcpHandler(
    (ctx) => {
      eras.push(ctx.era);
      return createExternalMcpV2Server(ctx, (call) => received.push(call));
    },
    { legacy },
  );
  const http = createServer((req, res) => void serve(req, res).catch(() => res.headersSent || res.writeHead(500).end()));
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const body = chunks.length ? Buffer.concat(chunks).toString('utf8') : undefined;
    const response = await handler.fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  }
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    eras,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
