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
   * Whether a tool the server marks `annotations.readOnlyHint: true` (and not `destructiveHint: true`) is a `read`
   * skill (default true). Annotations come from the server: false makes every tool of this server `execute`, so
   * an agent with `allowExecute: false` cannot call any of them whatever the server says.
   */
  readonly trustReadOnlyHint?: boolean;
  /** Most tools of the server considered at boot; past it the rest are ignored with a warning. Default 1000, at most 100000. */
  readonly maxTools?: number;
}

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
  readonly maxTools: number;
  readonly trustReadOnlyHint: boolean;
}
