import { MCP_SERVER_UNAVAILABLE_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** A required external MCP server could not be started, reached or listed at boot. */
export class McpServerUnavailableException extends ZmoduError {
  constructor(readonly failures: readonly string[]) {
    super(MCP_SERVER_UNAVAILABLE_MESSAGE(failures));
    this.name = 'McpServerUnavailableException';
  }
}
