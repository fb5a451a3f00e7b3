// The public API of @zmodu/mcp: the framework-free MCP server over the skill catalog (stdio, or any
// SDK transport), and McpModule, its Streamable HTTP endpoint in a Nest application.
export { McpSkillServer, createMcpSkillServer, annotationsFor } from './mcp-skill-server';
export type { McpSkillServerOptions, McpRequestExtra } from './mcp-skill-server';
export type { McpPrincipal } from './mcp-principal';
export { McpModule } from './mcp.module';
export type { McpModuleAsyncOptions, McpModuleForRootOptions } from './mcp.module-definition';
export type { McpModuleOptions, McpPrincipalResolver } from './mcp.options';
export type { McpAuthorizationOptions, McpProtectedResourceMetadata } from './mcp-authorization';
export { DEFAULT_MCP_PATH } from './mcp.options';
export { McpSessions } from './mcp-sessions';
export type { McpSessionStats } from './mcp-sessions';
export { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';
export { McpSdkMissingException } from './exceptions/mcp-sdk-missing.exception';
export { jsonRpcErrorBody } from './json-rpc-error';
export type { JsonRpcErrorBody } from './json-rpc-error';
export { McpCallLimiter, DEFAULT_MCP_RATE_LIMIT } from './mcp-call-limiter';
export type { McpRateLimit } from './mcp-call-limiter';
export { serveMcpOverStdio } from './stdio';
export type { McpStdioOptions, McpStdioSession } from './stdio';
