import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface HostileTool {
  name: string;
  description?: string;
  title?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** The result of tools/call; it sees the request's URL and Authorization header (to echo them). */
  result?: (request: { url: string; authorization?: string }) => Record<string, unknown>;
  /** Answer tools/call with bytes of its own instead (the JSON-RPC id of the call given): a body no SDK would write. */
  raw?: (res: ServerResponse, id: unknown) => void;
  delayMs?: number;
}

export interface HostileOptions {
  /** Answer in SSE streams instead of JSON bodies. Default false. */
  readonly sse?: boolean;
  /** Sessions (Mcp-Session-Id), forgotten by `forget()` as a restarted server would. Default false: stateless. */
  readonly stateful?: boolean;
  /** tools/list pages that never end: each answers after this delay with the tools and a next cursor. Default: one page. */
  readonly endlessPagesMs?: number;
}

/**
 * A hostile external MCP server over Streamable HTTP (JSON responses, or SSE), built on the SDK's low-level `Server`
 * so it can serve any tool list and any result, however malformed or large (from the red-team probes).
 */
export async function startHostile(tools: HostileTool[], options: HostileOptions = {}) {
  const calls: { name: string; arguments: unknown }[] = [];
  const authHeaders: (string | undefined)[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let initializes = 0;
  let pages = 0;

  const mcpServer = (req: IncomingMessage) => {
    const server = new Server({ name: 'hostile', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      pages++;
      const listed = tools.map(({ result: _r, delayMs: _d, raw: _raw, ...t }) => ({ inputSchema: { type: 'object' }, ...t }));
      if (options.endlessPagesMs === undefined) return { tools: listed };
      await new Promise((r) => setTimeout(r, options.endlessPagesMs));
      return { tools: request.params?.cursor ? [] : listed, nextCursor: `page-${pages}` };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      calls.push({ name: request.params.name, arguments: request.params.arguments });
      const tool = tools.find((t) => t.name === request.params.name);
      if (tool?.delayMs) await new Promise((r) => setTimeout(r, tool.delayMs));
      return (tool?.result?.({ url: req.url ?? '', authorization: req.headers.authorization }) ?? {
        content: [{ type: 'text', text: 'done' }],
      }) as never;
    });
    return server;
  };

  const http = createServer((req, res) => {
    authHeaders.push(req.headers.authorization);
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method?: string; params?: { name?: string } };
      const rawTool = body.method === 'tools/call' ? tools.find((t) => t.name === body.params?.name && t.raw) : undefined;
      if (rawTool) {
        calls.push({ name: rawTool.name, arguments: (body.params as { arguments?: unknown }).arguments });
        return rawTool.raw!(res, body.id);
      }
      if (body.method === 'initialize') initializes++;
      if (!options.stateful) {
        const server = mcpServer(req);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !options.sse });
        res.on('close', () => void Promise.all([transport.close(), server.close()]));
        return void server.connect(transport).then(() => transport.handleRequest(req, res, body));
      }
      const id = req.headers['mcp-session-id'];
      const known = typeof id === 'string' ? sessions.get(id) : undefined;
      if (known) return void known.handleRequest(req, res, body);
      if (body.method !== 'initialize') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      }
      const server = mcpServer(req);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: !options.sse,
        onsessioninitialized: (sid) => void sessions.set(sid, transport),
      });
      void server.connect(transport).then(() => transport.handleRequest(req, res, body));
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as { port: number };
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    authHeaders,
    /** How many initialize requests it answered. */
    initializes: () => initializes,
    /** How many tools/list requests it was sent. */
    pages: () => pages,
    /** Forget every session, as a server that restarted does: the next request of a client is answered 404. */
    forget: () => {
      for (const transport of sessions.values()) void transport.close();
      sessions.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const transport of sessions.values()) void transport.close();
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}
