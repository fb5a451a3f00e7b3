// The external MCP server over stdio, as the spec starts it: node -r scripts/register-ts.js <this file>.
// It appends to the file named by EXTERNAL_MCP_CALL_LOG one JSON line with its pid when it starts, then one per tool call.
import { appendFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createExternalMcpServer } from './external-mcp-server';

const log = process.env.EXTERNAL_MCP_CALL_LOG;
if (!log) {
  process.stderr.write('EXTERNAL_MCP_CALL_LOG is not set\n');
  process.exit(2);
}
appendFileSync(log, `${JSON.stringify({ pid: process.pid })}\n`);
const server = createExternalMcpServer((call) => appendFileSync(log, `${JSON.stringify(call)}\n`));
void server.connect(new StdioServerTransport());
