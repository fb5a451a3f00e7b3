import { ZmoduError } from '@zmodu/core';
/**
 * The MCP server SDK (`@modelcontextprotocol/server`, an optional peer of @zmodu/mcp) is not installed, or is too old:
 * thrown at boot by McpModule (and by serveMcpOverStdio / createMcpSkillServer when called), naming what to install.
 */
export class McpSdkMissingException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'McpSdkMissingException';
  }
}
