import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** A tool call the external server received: the spec asserts on the server side what reached it. */
export interface ReceivedCall {
  readonly tool: string;
  readonly arguments: unknown;
}

/**
 * A small external MCP server (the official SDK's McpServer), as a third party would write it: tool names that
 * do not fit our skill names, read-only and state-changing tools, an error result, a collision and a schema
 * our validator cannot compile. `received` is told of every tools/call that reaches a tool.
 */
export function createExternalMcpServer(received: (call: ReceivedCall) => void): McpServer {
  const server = new McpServer({ name: 'external-weather', version: '1.0.0' });
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  const readOnly = { readOnlyHint: true };

  server.registerTool(
    'get-weather',
    { description: 'Current weather of a city.', inputSchema: { city: z.string().min(1) }, annotations: readOnly },
    async (args) => (received({ tool: 'get-weather', arguments: args }), text(JSON.stringify({ city: args.city, tempC: 21 }))),
  );
  server.registerTool(
    'getForecast',
    { description: 'The forecast of a city, in words.', inputSchema: { city: z.string() }, annotations: readOnly },
    async (args) => (received({ tool: 'getForecast', arguments: args }), text(`Sunny in ${args.city} all week.`)),
  );
  server.registerTool(
    'send_alert',
    { description: 'Send a weather alert to every subscriber.', inputSchema: { message: z.string() } },
    async (args) => (received({ tool: 'send_alert', arguments: args }), text('sent')),
  );
  server.registerTool(
    'flaky_station',
    { description: 'Read a station that is offline.', inputSchema: { station: z.string() }, annotations: readOnly },
    async (args) => (
      received({ tool: 'flaky_station', arguments: args }),
      { ...text('station offline: try another station'), isError: true }
    ),
  );
  server.registerTool(
    'secret_tool',
    { description: 'A tool no agent lists.', annotations: readOnly },
    async () => (received({ tool: 'secret_tool', arguments: {} }), text('secret')),
  );
  // Two names that map to one skill name, 'list_stations': neither is registered.
  for (const name of ['list-stations', 'list_stations'])
    server.registerTool(name, { description: 'List the stations.', annotations: readOnly }, async () => text('[]'));
  // A lookahead is a valid JavaScript pattern, but patterns run on RE2 (linear time), which has none: refused.
  server.registerTool(
    'bad_pattern',
    {
      description: 'A schema our validator cannot compile: a lookahead, which the linear-time RE2 engine does not run.',
      inputSchema: { code: z.string().regex(/^(?=a)\w+$/) },
      annotations: readOnly,
    },
    async () => text('never'),
  );
  server.registerTool(
    'slow',
    { description: 'Answers after ms milliseconds.', inputSchema: { ms: z.number().int() }, annotations: readOnly },
    async (args, extra) => {
      received({ tool: 'slow', arguments: args });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, args.ms);
        extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()));
      });
      return text('done');
    },
  );
  return server;
}
