// The external MCP server built with the v2 SDK, over stdio (serveStdio: the client's first message picks the era), as
// the spec starts it: node -r scripts/register-ts.js <this file>. It appends to the file named by EXTERNAL_MCP_CALL_LOG
// one JSON line with its pid when it starts, then one per tool call (with the era of the connection).
import { appendFileSync } from 'node:fs';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createExternalMcpV2Server } from './external-mcp-v2';

const log = process.env.EXTERNAL_MCP_CALL_LOG;
if (!log) {
  process.stderr.write('EXTERNAL_MCP_CALL_LOG is not set\n');
  process.exit(2);
}
appendFileSync(log, `${JSON.stringify({ pid: process.pid })}\n`);
serveStdio((ctx) => createExternalMcpV2Server(ctx, (call) => appendFileSync(log, `${JSON.stringify(call)}\n`)));
