/** @internal The resolved options (ResolvedMcpOptions) of McpModule. */
export const MCP_OPTIONS = Symbol('ZMODU_MCP_OPTIONS');
