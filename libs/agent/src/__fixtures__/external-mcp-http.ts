import { createServer, IncomingHttpHeaders } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createExternalMcpServer, ReceivedCall } from './external-mcp-server';

export interface ExternalMcpHttpServer {
  /** The MCP endpoint, http://127.0.0.1:<port>/mcp. */
  readonly url: string;
  /** Tool calls that reached a tool. */
  readonly received: ReceivedCall[];
  /** The headers of every HTTP request the server got. */
  readonly requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/**
 * The external MCP server over Streamable HTTP on a local port (0: the system picks one), stateless: one
 * McpServer and one transport per request, as the SDK's stateless example does. GET (a standalone stream) is 405.
 */
export async function startExternalMcpHttpServer(): Promise<ExternalMcpHttpServer> {
  const received: ReceivedCall[] = [];
  const requests: IncomingHttpHeaders[] = [];
  const http = createServer((req, res) => {
    requests.push(req.headers);
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const server = createExternalMcpServer((call) => received.push(call));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void Promise.all([transport.close(), server.close()]));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** A URL where nothing listens: a port the system gave and took back. */
export async function closedUrl(): Promise<string> {
  const server = await startExternalMcpHttpServer();
  await server.close();
  return server.url;
}
