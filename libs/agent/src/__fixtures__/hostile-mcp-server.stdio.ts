// A hostile MCP server over stdio, as the spec starts it: node -r ts-node/register/transpile-only <this file>.
// It appends its pid to HOSTILE_MCP_LOG when it starts; while the file HOSTILE_MCP_REFUSE exists it exits at start
// (a server that is down, then comes back). Tools: dump (answers `bytes` of text in one line), echo.
import { appendFileSync, existsSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const refuse = process.env.HOSTILE_MCP_REFUSE;
if (refuse && existsSync(refuse)) {
  process.stderr.write('refusing to start\n');
  process.exit(1);
}
if (process.env.HOSTILE_MCP_LOG) appendFileSync(process.env.HOSTILE_MCP_LOG, `${JSON.stringify({ pid: process.pid })}\n`);

const server = new Server({ name: 'hostile-stdio', version: '1' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: 'dump', inputSchema: { type: 'object', properties: { bytes: { type: 'integer' } }, required: ['bytes'] } },
    { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const args = (request.params.arguments ?? {}) as { bytes?: number; text?: string };
  if (request.params.name === 'dump') return { content: [{ type: 'text', text: 'A'.repeat(args.bytes ?? 0) }] };
  return { content: [{ type: 'text', text: String(args.text) }] };
});
void server.connect(new StdioServerTransport());
