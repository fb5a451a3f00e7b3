/** @internal The resolved options (ResolvedMcpOptions) of McpModule. */
export const MCP_OPTIONS = Symbol('ZMODU_MCP_OPTIONS');
/** @internal The route of the endpoint (forRoot's `path`). */
export const MCP_PATH = Symbol('ZMODU_MCP_PATH');
