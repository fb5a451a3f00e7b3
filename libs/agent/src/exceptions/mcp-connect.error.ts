/** @internal A failure to connect to or list one MCP server at boot; its message names the server and what failed. */
export class McpConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConnectError';
  }
}
