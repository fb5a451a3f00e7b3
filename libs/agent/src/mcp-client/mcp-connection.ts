import { Logger } from '@nestjs/common';
import type { Client, ProtocolEra, RequestOptions, StreamableHTTPClientTransport, Tool } from '@modelcontextprotocol/client';
import {
  MCP_ANSWERS_DROPPED_MESSAGE,
  MCP_CONNECTION_LOST_MESSAGE,
  MCP_RECONNECT_FAILED_MESSAGE,
  MCP_RECONNECTED_MESSAGE,
  MCP_SERVER_FAILED_MESSAGE,
} from '../agent.messages';
import { McpConnectError } from '../exceptions/mcp-connect.error';
import { McpUnavailableError } from '../exceptions/mcp-unavailable.error';
import { boundAnswers, MAX_ANSWERS_IN_FLIGHT } from './mcp-answers';
import { cappedFetch } from './mcp-capped-fetch';
import { AcceptingOutputValidator } from './mcp-output-validator';
import { describeCause, describeServer, redact } from './mcp-describe';
import { isOversize } from './mcp-oversize';
import { clientSdk, ClientSdk } from './mcp-sdk';
import { NormalizedMcpServer } from './mcp-server-options';
import { McpStdioTransport } from './mcp-stdio-transport';

const CLIENT_INFO = { name: 'zmodu-agent', version: '0.1.0' };
const STDERR_TAIL = 1000;
const MAX_TOOL_PAGES = 100;
const TERMINATE_WAIT_MS = 1000;
/** The revision `era: 'modern'` pins (the SDK's first 2026 revision). */
const MODERN_VERSION = '2026-07-28';

/** One tool of tools/list with the sizes measured as it came (an oversized schema or description is not kept). */
export interface ListedTool {
  readonly tool: Tool;
  /** JSON bytes of its inputSchema; null when it cannot be serialized. */
  readonly schemaBytes: number | null;
  /** Characters of the text that would be its description (description, else title). */
  readonly descriptionLength: number;
}

type AnyTransport = McpStdioTransport | StreamableHTTPClientTransport;

/** One open client of the server: the SDK client and its transport. */
interface Link {
  readonly client: Client;
  readonly transport: AnyTransport;
  readonly openedAt: number;
  /** The protocol era the connection landed on: 'modern' (2026-07-28, stateless) or 'legacy' (2025, initialize). */
  readonly era: ProtocolEra;
}

/**
 * One external MCP server: its current client, reopened when it is lost. The client speaks either protocol era:
 * `era: 'auto'` (the default) probes with `server/discover` and falls back to the 2025 `initialize` handshake for a
 * server that does not know it; 'legacy' and 'modern' (a pin on 2026-07-28) do not probe. A stdio child that exits, or
 * an HTTP server that forgot our session (404), loses the link; it is reopened after a backoff (`reconnectDelayMs`,
 * doubled at each failed attempt up to `reconnectMaxDelayMs`, each wait drawn between half and all of it), forever,
 * one attempt at a time. While it is down a call fails at once (McpUnavailableError, with when the next attempt is
 * due), never waits.
 */
export class McpConnection {
  private link: Link | undefined;
  private closing = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private nextAttemptAt = 0;
  private stderr = '';
  private readonly sdk: ClientSdk;

  private constructor(
    readonly server: NormalizedMcpServer,
    private readonly logger: Logger,
  ) {
    this.sdk = clientSdk();
  }

  /** The era of the open connection (undefined while it is down). */
  get era(): ProtocolEra | undefined {
    return this.link?.era;
  }

  /** Start (stdio) or reach (HTTP) the server, initialize, within `connectTimeoutMs`. Throws McpConnectError. */
  static async open(server: NormalizedMcpServer, logger: Logger): Promise<McpConnection> {
    const connection = new McpConnection(server, logger);
    try {
      connection.link = await connection.connect();
    } catch (err) {
      const tail = connection.stderr.trim()
        ? `; its stderr ends: ${JSON.stringify(redact(connection.stderr.trim(), server).slice(-300))}`
        : '';
      const phase = server.transport === 'stdio' ? 'could not be started and initialized' : 'could not be reached and initialized';
      throw new McpConnectError(
        MCP_SERVER_FAILED_MESSAGE(server.name, describeServer(server), phase, `${bootCause(connection.sdk, err, server)}${tail}`),
      );
    }
    return connection;
  }

  /**
   * The tools of the server (the pages of tools/list, all of them within one `connectTimeoutMs`: a server that answers
   * each of endless pages just in time held the boot for 100 times that), paging stopped once more than `maxTools`
   * came (the caller warns and keeps the first ones). Each tool's schema and description are measured as its page
   * arrives, and dropped when over their caps, so a listing holds no more than the caps. Throws McpConnectError.
   */
  async listTools(): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    const deadline = Date.now() + this.server.connectTimeoutMs;
    try {
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const left = deadline - Date.now();
        if (left <= 0) throw new this.sdk.SdkError(this.sdk.SdkErrorCode.RequestTimeout, 'tools/list did not end in time');
        // One page per request, measured as it comes: the SDK's listTools() without a cursor would gather every page
        // (a hostile server's too) in memory first.
        const result = (await this.current().request({ method: 'tools/list', params: cursor !== undefined ? { cursor } : {} }, TOOLS_PAGE, {
          timeout: left,
        })) as ToolsPage;
        for (const tool of result.tools) tools.push(this.measured(tool));
        cursor = result.nextCursor;
        if (!cursor || tools.length > this.server.maxTools) break;
      }
    } catch (err) {
      const cause =
        err instanceof this.sdk.ProtocolError && isOversize(err.data)
          ? `a page of tools/list was larger than maxMessageBytes (${this.server.maxMessageBytes} bytes)`
          : err instanceof this.sdk.SdkError && err.code === this.sdk.SdkErrorCode.RequestTimeout
            ? `its pages did not end within ${this.server.connectTimeoutMs} ms (connectTimeoutMs, for the whole listing; ${tools.length} tools came)`
            : bootCause(this.sdk, err, this.server);
      throw new McpConnectError(
        MCP_SERVER_FAILED_MESSAGE(this.server.name, describeServer(this.server), 'answered initialize but tools/list failed', cause),
      );
    }
    return tools;
  }

  /**
   * tools/call on the current client; McpUnavailableError at once when there is none. The tool's definition as we
   * registered it goes with the call (without its outputSchema): the SDK then neither reads its response cache nor,
   * on a header-mismatch error, lists every page again, and never runs the server's output schema on the result.
   */
  callTool(tool: Tool, args: Record<string, unknown> | undefined, options: RequestOptions): Promise<unknown> {
    const { outputSchema: _ignored, ...definition } = tool;
    return this.current().callTool({ name: tool.name, arguments: args }, { ...options, toolDefinition: definition });
  }

  /**
   * Tell the connection that a call found the link lost though the transport is still open (an HTTP server that
   * answers 404 to our session id restarted and forgot it): it is reopened as if it had closed.
   */
  lost(): void {
    const link = this.link;
    if (link) void link.client.close().catch(() => undefined);
  }

  /** When the next attempt to reopen is due, in ms from now (0 when the link is up or an attempt runs now). */
  retryAfterMs(): number {
    return this.link ? 0 : Math.max(0, this.nextAttemptAt - Date.now());
  }

  /** Close the client: a stdio child is ended (stdin closed, then SIGTERM, then SIGKILL); an HTTP session is ended. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearTimeout(this.timer);
    const link = this.link;
    this.link = undefined;
    if (link) await this.shut(link);
  }

  private current(): Client {
    if (this.link) return this.link.client;
    throw new McpUnavailableError(
      this.closing ? 'the application is shutting down' : 'its connection was lost and is being reopened',
      this.retryAfterMs(),
    );
  }

  private measured(tool: Tool): ListedTool {
    let schemaBytes: number | null;
    try {
      schemaBytes = Buffer.byteLength(JSON.stringify(tool.inputSchema) ?? '');
    } catch {
      schemaBytes = null;
    }
    const text = typeof tool.description === 'string' && tool.description.trim() ? tool.description : tool.title;
    const descriptionLength = typeof text === 'string' ? text.trim().length : 0;
    // Not kept past their caps: the tool is refused for them, and a listing must not hold megabytes per tool.
    if (schemaBytes === null || schemaBytes > this.server.maxSchemaBytes) tool = { ...tool, inputSchema: { type: 'object' } };
    if (descriptionLength > this.server.maxDescriptionLength) tool = { ...tool, description: '', title: '' };
    return { tool: withoutDialect(tool), schemaBytes, descriptionLength };
  }

  /**
   * One new client, connected within `connectTimeoutMs` (the era probe included); on failure nothing is left running.
   * In 'auto' over stdio, a child that ends on the probe (some 2025 servers exit on any request before initialize) is
   * started once more and spoken to in the 2025 era, as the SDK's own stdio transport does on a sibling process.
   */
  private async connect(): Promise<Link> {
    const era = this.server.era;
    try {
      return await this.connectIn(era === 'modern' ? { pin: MODERN_VERSION } : era);
    } catch (err) {
      const probeFailed = err instanceof this.sdk.SdkError && err.code === this.sdk.SdkErrorCode.EraNegotiationFailed;
      if (era !== 'auto' || this.server.transport !== 'stdio' || !probeFailed || this.closing) throw err;
      this.logger.debug(`MCP server '${this.server.name}': the era probe ended the connection; trying the 2025 handshake`);
      return this.connectIn('legacy');
    }
  }

  private async connectIn(mode: 'auto' | 'legacy' | { pin: string }): Promise<Link> {
    const server = this.server;
    const sdk = this.sdk;
    // No output validation by the SDK (it would run the server's own patterns synchronously): see AcceptingOutputValidator.
    const client = new sdk.Client(CLIENT_INFO, {
      capabilities: {},
      jsonSchemaValidator: new AcceptingOutputValidator(),
      versionNegotiation: { mode, probe: { timeoutMs: server.connectTimeoutMs, maxRetries: 0 } },
    });
    this.stderr = '';
    const transport: AnyTransport =
      server.transport === 'stdio'
        ? new McpStdioTransport({
            command: server.command as string,
            args: server.args,
            ...(server.env ? { env: server.env } : {}),
            ...(server.cwd ? { cwd: server.cwd } : {}),
            maxMessageBytes: server.maxMessageBytes,
            terminateWaitMs: TERMINATE_WAIT_MS,
          })
        : new sdk.StreamableHTTPClientTransport(server.url as URL, {
            requestInit: { headers: { ...server.headers } },
            fetch: cappedFetch(server.maxMessageBytes),
          });
    if (transport instanceof McpStdioTransport)
      transport.stderr.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        this.stderr = (this.stderr + text).slice(-STDERR_TAIL);
        for (const line of text.split('\n')) if (line.trim()) this.logger.debug(`[${server.name} stderr] ${redact(line, server)}`);
      });
    client.onerror = (err) => this.logger.debug(`MCP server '${server.name}': ${describeCause(err, server)}`);
    let dropped = 0;
    boundAnswers(transport, server.maxMessageBytes, () => {
      if (dropped++ === 0) this.logger.warn(MCP_ANSWERS_DROPPED_MESSAGE(server.name, MAX_ANSWERS_IN_FLIGHT, server.maxMessageBytes));
    });
    const opened: { client: Client; transport: AnyTransport; openedAt: number; era: ProtocolEra } = {
      client,
      transport,
      openedAt: Date.now(),
      era: 'legacy',
    };
    client.onclose = () => this.closed(opened);
    try {
      await client.connect(transport, { timeout: server.connectTimeoutMs });
    } catch (err) {
      await this.shut(opened);
      throw err;
    }
    opened.era = client.getProtocolEra() ?? 'legacy';
    return opened;
  }

  /** The link closed: unless we closed it, reopen it after the backoff. */
  private closed(link: Link): void {
    if (this.closing || this.link !== link) return;
    this.link = undefined;
    // A link that stayed up longer than the longest wait starts the backoff over.
    if (Date.now() - link.openedAt > this.server.reconnectMaxDelayMs) this.attempt = 0;
    const delay = this.schedule();
    this.logger.warn(MCP_CONNECTION_LOST_MESSAGE(this.server.name, delay));
    void this.shut(link);
  }

  private schedule(): number {
    const { reconnectDelayMs, reconnectMaxDelayMs } = this.server;
    const ceiling = Math.min(reconnectMaxDelayMs, reconnectDelayMs * 2 ** Math.min(this.attempt, 30));
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.attempt++;
    this.nextAttemptAt = Date.now() + delay;
    this.timer = setTimeout(() => void this.reopen(), delay);
    this.timer.unref();
    return delay;
  }

  private async reopen(): Promise<void> {
    if (this.closing) return;
    this.nextAttemptAt = Date.now();
    let link: Link;
    try {
      link = await this.connect();
    } catch (err) {
      if (this.closing) return;
      const delay = this.schedule();
      this.logger.warn(MCP_RECONNECT_FAILED_MESSAGE(this.server.name, this.attempt - 1, bootCause(this.sdk, err, this.server), delay));
      return;
    }
    if (this.closing) return void this.shut(link);
    this.link = link;
    this.logger.log(MCP_RECONNECTED_MESSAGE(this.server.name, this.attempt));
  }

  private async shut(link: Link): Promise<void> {
    const { client, transport } = link;
    // A 2025 session is ended (DELETE); a 2026 connection has none.
    if (!(transport instanceof McpStdioTransport) && transport.sessionId) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, TERMINATE_WAIT_MS)));
      await Promise.race([transport.terminateSession().catch(() => undefined), waited]);
      clearTimeout(timer);
    }
    await client
      .close()
      .catch((err: unknown) => this.logger.debug(`MCP server '${this.server.name}': close failed: ${describeCause(err, this.server)}`));
    // A client that never connected does not close its transport: end the child ourselves.
    await transport.close().catch(() => undefined);
  }
}

/**
 * JSON Schema dialects whose declaration is dropped from an inputSchema before our validator reads it: MCP's default
 * is 2020-12, which the v2 SDK's servers declare on every tool. Our validator (draft-07 keywords, strict) refuses
 * any keyword it does not enforce, so a schema that needs a keyword of a later draft (prefixItems, unevaluated*) is
 * still refused, tool by tool; any other declared dialect stays, and is refused with it.
 */
const DIALECTS: ReadonlySet<unknown> = new Set([
  'https://json-schema.org/draft/2020-12/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-07/schema',
]);

function withoutDialect(tool: Tool): Tool {
  const schema = tool.inputSchema as Record<string, unknown>;
  if (!Object.hasOwn(schema, '$schema') || !DIALECTS.has(schema.$schema)) return tool;
  const { $schema: _dialect, ...rest } = schema;
  return { ...tool, inputSchema: rest as Tool['inputSchema'] };
}

/** A page of tools/list as we read it. */
interface ToolsPage {
  readonly tools: Tool[];
  readonly nextCursor?: string;
}

/**
 * The result schema of a tools/list page, checked shallowly: an array of tools, each an object with a string name
 * and an object inputSchema, and a string cursor. The SDK's own schema walks every schema to its end, and a server's
 * schema nested 1200 deep overflowed the stack (the whole listing failed); a schema's depth and size are the loader's
 * to judge, tool by tool.
 */
const TOOLS_PAGE = {
  '~standard': {
    version: 1 as const,
    vendor: 'zmodu',
    validate: (value: unknown) => {
      const page = value as { tools?: unknown; nextCursor?: unknown } | null;
      const problem =
        page === null || typeof page !== 'object' || !Array.isArray(page.tools)
          ? 'the result has no tools array'
          : page.nextCursor !== undefined && typeof page.nextCursor !== 'string'
            ? 'nextCursor is not a string'
            : (page.tools as unknown[]).findIndex((tool) => toolShapeProblem(tool) !== null);
      if (problem === -1) return { value: value as ToolsPage };
      const message = typeof problem === 'string' ? problem : `tools[${problem}] ${toolShapeProblem((page!.tools as unknown[])[problem])}`;
      return { issues: [{ message }] };
    },
  },
};

function toolShapeProblem(tool: unknown): string | null {
  if (tool === null || typeof tool !== 'object' || Array.isArray(tool)) return 'is not an object';
  const t = tool as Record<string, unknown>;
  if (typeof t.name !== 'string') return 'has no string name';
  if (t.inputSchema === null || typeof t.inputSchema !== 'object' || Array.isArray(t.inputSchema)) return 'has no inputSchema object';
  for (const key of ['description', 'title'] as const)
    if (t[key] !== undefined && typeof t[key] !== 'string') return `has a ${key} that is not a string`;
  for (const key of ['annotations', 'execution'] as const)
    if (t[key] !== undefined && (t[key] === null || typeof t[key] !== 'object')) return `has ${key} that is not an object`;
  return null;
}

function bootCause(sdk: ClientSdk, err: unknown, server: NormalizedMcpServer): string {
  if (err instanceof sdk.SdkError && err.code === sdk.SdkErrorCode.RequestTimeout)
    return `no answer within ${server.connectTimeoutMs} ms (connectTimeoutMs)`;
  return describeCause(err, server);
}
