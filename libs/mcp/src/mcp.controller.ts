import { Controller, Delete, Get, Post, Req, Res, Type } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';
import { McpSessions } from './mcp-sessions';
import { INVALID_OPTION_MESSAGE } from './mcp.messages';

const PATH = /^\/?[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*\/?$/;

/**
 * The Streamable HTTP endpoint at `path`: POST (JSON-RPC messages), GET (the server's event stream)
 * and DELETE (end the session). A Nest controller, so the application's guards (its authentication)
 * run before it; the response is written by the MCP transport.
 */
export function createMcpController(path: string): Type<unknown> {
  if (typeof path !== 'string' || !PATH.test(path))
    throw new InvalidMcpOptionsException(
      INVALID_OPTION_MESSAGE('path', `must be a plain route such as '/mcp', got ${JSON.stringify(path)}`),
    );

  @Controller()
  class McpController {
    constructor(private readonly sessions: McpSessions) {}

    @Post(path)
    post(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
      return this.sessions.handle(req, res);
    }

    @Get(path)
    get(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
      return this.sessions.handle(req, res);
    }

    @Delete(path)
    delete(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
      return this.sessions.handle(req, res);
    }
  }
  return McpController;
}
