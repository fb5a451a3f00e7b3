import { Logger } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_SERVER_FAILED_MESSAGE } from '../agent.messages';
import { McpConnectError } from '../exceptions/mcp-connect.error';
import { AcceptingOutputValidator } from './mcp-output-validator';
import { describeCause, describeServer, redact } from './mcp-describe';
import { NormalizedMcpServer } from './mcp-server-options';

const CLIENT_INFO = { name: 'zmodu-agent', version: '0.1.0' };
const STDERR_TAIL = 1000;
const MAX_TOOL_PAGES = 100;
const TERMINATE_WAIT_MS = 1000;

/** One connected external MCP server: its client, its tools, and how to close it. */
export class McpConnection {
  private closing = false;

  private constructor(
    readonly server: NormalizedMcpServer,
    readonly client: Client,
    private readonly transport: StdioClientTransport | StreamableHTTPClientTransport,
    private readonly logger: Logger,
  ) {}

  /** Start (stdio) or reach (HTTP) the server, initialize, within `connectTimeoutMs`. Throws McpConnectError. */
  static async open(server: NormalizedMcpServer, logger: Logger): Promise<McpConnection> {
    // No output validation by the SDK (it would run the server's own patterns synchronously): see AcceptingOutputValidator.
    const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: new AcceptingOutputValidator() });
    let stderr = '';
    const transport =
      server.transport === 'stdio'
        ? new StdioClientTransport({
            command: server.command as string,
            args: [...server.args],
            ...(server.env ? { env: { ...server.env } } : {}),
            ...(server.cwd ? { cwd: server.cwd } : {}),
            stderr: 'pipe',
          })
        : new StreamableHTTPClientTransport(server.url as URL, { requestInit: { headers: { ...server.headers } } });
    if (transport instanceof StdioClientTransport)
      transport.stderr?.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        stderr = (stderr + text).slice(-STDERR_TAIL);
        for (const line of text.split('\n')) if (line.trim()) logger.debug(`[${server.name} stderr] ${redact(line, server)}`);
      });
    const connection = new McpConnection(server, client, transport, logger);
    client.onclose = () => {
      if (!connection.closing)
        logger.warn(`MCP server '${server.name}' closed the connection: its tools fail (mcp_unavailable) until the app restarts.`);
    };
    try {
      await client.connect(transport, { timeout: server.connectTimeoutMs });
    } catch (err) {
      await connection.close();
      const tail = stderr.trim() ? `; its stderr ends: ${JSON.stringify(redact(stderr.trim(), server).slice(-300))}` : '';
      const phase = server.transport === 'stdio' ? 'could not be started and initialized' : 'could not be reached and initialized';
      throw new McpConnectError(MCP_SERVER_FAILED_MESSAGE(server.name, describeServer(server), phase, `${bootCause(err, server)}${tail}`));
    }
    return connection;
  }

  /**
   * The tools of the server (the pages of tools/list, within `connectTimeoutMs` each), paging stopped once more than
   * `maxTools` came (the caller warns and keeps the first ones). Throws McpConnectError.
   */
  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const result = await this.client.listTools(cursor ? { cursor } : undefined, { timeout: this.server.connectTimeoutMs });
        tools.push(...result.tools);
        cursor = result.nextCursor;
        if (!cursor || tools.length > this.server.maxTools) break;
      }
    } catch (err) {
      throw new McpConnectError(
        MCP_SERVER_FAILED_MESSAGE(
          this.server.name,
          describeServer(this.server),
          'answered initialize but tools/list failed',
          bootCause(err, this.server),
        ),
      );
    }
    return tools;
  }

  /** Close the client: a stdio child is ended (stdin closed, then SIGTERM, then SIGKILL); an HTTP session is ended. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, TERMINATE_WAIT_MS)));
      await Promise.race([this.transport.terminateSession().catch(() => undefined), waited]);
      clearTimeout(timer);
    }
    await this.client
      .close()
      .catch((err: unknown) => this.logger.debug(`MCP server '${this.server.name}': close failed: ${describeCause(err, this.server)}`));
  }
}

function bootCause(err: unknown, server: NormalizedMcpServer): string {
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
    return `no answer within ${server.connectTimeoutMs} ms (connectTimeoutMs)`;
  return describeCause(err, server);
}
