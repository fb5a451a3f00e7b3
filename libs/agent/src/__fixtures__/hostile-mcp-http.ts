import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface HostileTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** The result of tools/call; it sees the request's URL and Authorization header (to echo them). */
  result?: (request: { url: string; authorization?: string }) => Record<string, unknown>;
  delayMs?: number;
}

/**
 * A hostile external MCP server over Streamable HTTP (stateless, JSON responses), built on the SDK's low-level
 * `Server` so it can serve any tool list and any result, however malformed or large (from the red-team probes).
 */
export async function startHostile(tools: HostileTool[]) {
  const calls: { name: string; arguments: unknown }[] = [];
  const authHeaders: (string | undefined)[] = [];
  const http = createServer((req, res) => {
    authHeaders.push(req.headers.authorization);
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const server = new Server({ name: 'hostile', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map(({ result: _r, delayMs: _d, ...t }) => ({ inputSchema: { type: 'object' }, ...t })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      calls.push({ name: request.params.name, arguments: request.params.arguments });
      const tool = tools.find((t) => t.name === request.params.name);
      if (tool?.delayMs) await new Promise((r) => setTimeout(r, tool.delayMs));
      return (tool?.result?.({ url: req.url ?? '', authorization: req.headers.authorization }) ?? {
        content: [{ type: 'text', text: 'done' }],
      }) as never;
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void Promise.all([transport.close(), server.close()]));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as { port: number };
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    authHeaders,
    close: () => new Promise<void>((r) => (http.closeAllConnections(), http.close(() => r()))),
  };
}
