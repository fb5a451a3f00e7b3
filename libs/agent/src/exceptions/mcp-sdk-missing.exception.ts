import { ZmoduError } from '@zmodu/core';
/**
 * The MCP client SDK (`@modelcontextprotocol/client`, an optional peer of @zmodu/agent) is not installed, or is too
 * old: thrown at boot when AgentModule has `mcpServers`, naming what to install.
 */
export class McpClientSdkMissingException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'McpClientSdkMissingException';
  }
}
