import { ZmoduError } from '@zmodu/core';
/** @internal A failure to connect to or list one MCP server at boot; its message names the server and what failed. */
export class McpConnectError extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'McpConnectError';
  }
}
