// A hostile MCP server over stdio, as the spec starts it: node -r scripts/register-ts.js <this file>.
// It appends its pid to HOSTILE_MCP_LOG when it starts; while the file HOSTILE_MCP_REFUSE exists it exits at start
// (a server that is down, then comes back). Tools: dump (answers `bytes` of text in one line), echo, answers (how many
// answers to its flood it has read). HOSTILE_MCP_FLOOD=COUNT:ID_BYTES: once initialized it stops reading its stdin,
// sends COUNT pings with ids of ID_BYTES bytes, then reads again (a server that floods requests and reads no answer).
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
    { name: 'answers', inputSchema: { type: 'object' } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const args = (request.params.arguments ?? {}) as { bytes?: number; text?: string };
  if (request.params.name === 'answers') return { content: [{ type: 'text', text: String(floodAnswers) }] };
  if (request.params.name === 'dump') return { content: [{ type: 'text', text: 'A'.repeat(args.bytes ?? 0) }] };
  return { content: [{ type: 'text', text: String(args.text) }] };
});

let floodAnswers = 0;
const [count, idBytes] = (process.env.HOSTILE_MCP_FLOOD ?? '').split(':').map(Number);
if (count > 0) {
  // Counted as they come in (beside the SDK's reader, which reports them as answers to nothing).
  let tail = '';
  process.stdin.on('data', (chunk: Buffer) => {
    const lines = (tail + chunk.toString('utf8')).split('\n');
    tail = lines.pop() ?? '';
    floodAnswers += lines.filter((l) => l.includes('"id":"flood-')).length;
  });
  server.oninitialized = () => {
    process.stdin.pause();
    const pad = 'x'.repeat(idBytes);
    let sent = 0;
    const more = (): void => {
      while (sent < count) {
        sent++;
        if (!process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: `flood-${sent}-${pad}`, method: 'ping' })}\n`))
          return void process.stdout.once('drain', more);
      }
      process.stdin.resume();
    };
    more();
  };
}
void server.connect(new StdioServerTransport());
