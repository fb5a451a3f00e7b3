// The public API of @zmodu/mcp: the framework-free MCP server over the skill catalog (stdio, or any
// SDK transport), and McpModule, its Streamable HTTP endpoint in a Nest application.
export { McpSkillServer, createMcpSkillServer } from './mcp-skill-server';
export type { McpSkillServerOptions } from './mcp-skill-server';
export type { McpPrincipal } from './mcp-principal';
export { McpModule } from './mcp.module';
export type { McpModuleAsyncOptions } from './mcp.module-definition';
export type { McpModuleOptions } from './mcp.options';
export type { McpAuthorizationOptions } from './mcp-authorization';
export type { McpRateLimit } from './mcp-call-limiter';
export { serveMcpOverStdio } from './stdio';
export type { McpStdioOptions } from './stdio';
export { ZmoduError } from '@zmodu/core';
