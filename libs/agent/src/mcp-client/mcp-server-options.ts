import type { ActionClass } from '@zmodu/guard';

/** What every external MCP server entry of `AgentModule.forRoot({ mcpServers })` takes. */
export interface McpServerCommonOptions {
  /**
   * One lower-case word (letters, digits, '_'), the first segment of its skills' names: the server 'weather'
   * with the tool 'get-weather' gives the skill 'weather.get_weather'.
   */
  readonly name: string;
  /** Fail boot when the server cannot be reached or listed (default true); false: warn and boot without its tools. */
  readonly required?: boolean;
  /** Deadline of one tool call in ms (the skill's timeoutMs and the MCP request timeout). Default 30000. */
  readonly timeoutMs?: number;
  /** Deadline in ms of connecting (initialize) and of listing the tools at boot. Default 10000. */
  readonly connectTimeoutMs?: number;
  /** Its skills refuse a call without a tenant, like every skill by default (fail closed). Default true. */
  readonly tenantScoped?: boolean;
  /** A permission code the caller must hold to call any of its tools (`ctx.permissions`). Default: none. */
  readonly requiredPermission?: string;
  /**
   * Largest tool result in bytes (the value the model would see, as JSON). A larger one reaches the model as the
   * tool error `mcp_result_too_large`, with nothing of its content. Default 262144 (256 KiB), at most 16 MiB.
   */
  readonly maxResultBytes?: number;
  /**
   * Largest JSON-RPC message read from the server, in bytes, on every transport (a stdio line, a JSON body, one SSE
   * event). A larger answer to a call is the tool error `mcp_result_too_large` (nothing of it is kept, the connection
   * stays up); a larger tools/list page fails the listing. Default 8 MiB (below the SDK's 10 MiB stdio buffer), at
   * least 64 KiB, at most 64 MiB, and at least maxResultBytes.
   */
  readonly maxMessageBytes?: number;
  /**
   * Whether a tool the server marks `annotations.readOnlyHint: true` (and not `destructiveHint: true`) is a `read`
   * skill. Default false: annotations come from the server, and a server we defend against does not decide that its
   * own tool is harmless; every tool is `execute` unless `actions` names its class. Set true only for a server you run.
   */
  readonly trustReadOnlyHint?: boolean;
  /**
   * The class of tools, by the name the server lists them under (`{ 'get-weather': 'read' }`): the application's
   * word, which the server's annotations never override. A name the server does not list is a boot warning.
   */
  readonly actions?: Readonly<Record<string, ActionClass>>;
  /** Most tools of the server considered at boot; past it the rest are ignored with a warning. Default 1000, at most 100000. */
  readonly maxTools?: number;
  /**
   * Largest `inputSchema` of one tool, as JSON bytes: it is sent to the model with every request. A tool past it is not
   * registered (a warning says why). Default 64 KiB, at most 4 MiB.
   */
  readonly maxSchemaBytes?: number;
  /** Longest description (or title) of one tool, in characters; a tool past it is not registered. Default 4096, at most 65536. */
  readonly maxDescriptionLength?: number;
  /**
   * The most bytes of tool definitions (each tool's inputSchema JSON and description) registered from this server:
   * tools are taken in skill-name order while they fit, the others are not registered (a warning names them).
   * Default 512 KiB, at most 64 MiB, and at least maxSchemaBytes.
   */
  readonly maxToolBytesPerServer?: number;
  /** Wait before reopening a lost connection, in ms; doubled at each failed attempt (jittered) up to reconnectMaxDelayMs. Default 500. */
  readonly reconnectDelayMs?: number;
  /** Longest wait between two attempts to reopen a lost connection, in ms. Default 30000. */
  readonly reconnectMaxDelayMs?: number;
  /**
   * The protocol era to speak. 'auto' (default): probe with `server/discover` (within connectTimeoutMs) and speak
   * 2026-07-28 to a server that offers it, else the 2025 `initialize` handshake. 'legacy': the 2025 handshake, no probe.
   * 'modern': 2026-07-28 only (a 2025-only server fails to connect).
   */
  readonly era?: McpEra;
}

/** The protocol era of an external MCP server entry: see `McpServerCommonOptions.era`. */
export type McpEra = 'auto' | 'legacy' | 'modern';

/** A server started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioServerOptions extends McpServerCommonOptions {
  readonly command: string;
  readonly args?: readonly string[];
  /** Variables for the child, added to a minimal environment (HOME, PATH, ...): the app's own variables are not passed on. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: never;
  readonly headers?: never;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerOptions extends McpServerCommonOptions {
  /** http: or https: URL of the MCP endpoint, e.g. 'https://tools.example.com/mcp'. */
  readonly url: string;
  /** Sent with every request, e.g. { Authorization: `Bearer ${token}` }. Never logged. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly command?: never;
  readonly args?: never;
  readonly env?: never;
  readonly cwd?: never;
}

/** An external MCP server whose tools agents may call as skills named `<server>.<tool>`. */
export type McpServerOptions = McpStdioServerOptions | McpHttpServerOptions;

export const DEFAULT_MCP_TIMEOUT_MS = 30_000;
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_MCP_MAX_RESULT_BYTES = 256 * 1024;
export const MAX_MCP_MAX_RESULT_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MCP_MAX_TOOLS = 1000;
export const MAX_MCP_MAX_TOOLS = 100_000;
export const DEFAULT_MCP_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
export const MIN_MCP_MAX_MESSAGE_BYTES = 64 * 1024;
export const MAX_MCP_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MCP_MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_MCP_MAX_SCHEMA_BYTES = 4 * 1024 * 1024;
export const DEFAULT_MCP_MAX_DESCRIPTION_LENGTH = 4096;
export const MAX_MCP_MAX_DESCRIPTION_LENGTH = 65_536;
export const DEFAULT_MCP_MAX_TOOL_BYTES_PER_SERVER = 512 * 1024;
export const MAX_MCP_MAX_TOOL_BYTES_PER_SERVER = 64 * 1024 * 1024;
export const DEFAULT_MCP_RECONNECT_DELAY_MS = 500;
export const DEFAULT_MCP_RECONNECT_MAX_DELAY_MS = 30_000;
/** The longest tool name considered (the MCP specification's 128): a longer one is refused before it is mapped. */
export const MCP_TOOL_NAME_MAX_LENGTH = 128;
export const MCP_SERVER_NAME_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;

/** @internal An entry after validation, defaults filled. */
export interface NormalizedMcpServer {
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  readonly command?: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly required: boolean;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly tenantScoped: boolean;
  readonly requiredPermission?: string;
  readonly maxResultBytes: number;
  readonly maxMessageBytes: number;
  readonly maxTools: number;
  readonly maxSchemaBytes: number;
  readonly maxDescriptionLength: number;
  readonly maxToolBytesPerServer: number;
  readonly trustReadOnlyHint: boolean;
  /** The application's classes of tools, by tool name as the server lists them. */
  readonly actions: ReadonlyMap<string, ActionClass>;
  readonly reconnectDelayMs: number;
  readonly reconnectMaxDelayMs: number;
  readonly era: McpEra;
}
