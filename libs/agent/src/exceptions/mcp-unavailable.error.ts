import { ZmoduError } from '@zmodu/core';
/** @internal A call to an MCP server whose connection is down (being reopened, or the app is closing): it fails at once. */
export class McpUnavailableError extends ZmoduError {
  constructor(
    readonly why: string,
    /** When the next attempt to reopen the connection is due, in ms from now. */
    readonly retryAfterMs: number,
  ) {
    super(why);
    this.name = 'McpUnavailableError';
  }
}
