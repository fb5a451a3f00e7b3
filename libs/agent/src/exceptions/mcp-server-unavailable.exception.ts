import { MCP_SERVER_UNAVAILABLE_MESSAGE } from '../agent.messages';

/** A required external MCP server could not be started, reached or listed at boot. */
export class McpServerUnavailableException extends Error {
  constructor(readonly failures: readonly string[]) {
    super(MCP_SERVER_UNAVAILABLE_MESSAGE(failures));
    this.name = 'McpServerUnavailableException';
  }
}
