// An external MCP server, as a third party writes one with the official v2 SDK, over stdio: one tool that reads the
// weather (it says it is read-only; zmodu does not take its word for it) and one that would send an alert.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

serveStdio(() => {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  const text = (value) => ({ content: [{ type: 'text', text: value }] });
  server.registerTool(
    'get-weather',
    { description: 'Current weather of a city.', inputSchema: z.object({ city: z.string().min(1) }), annotations: { readOnlyHint: true } },
    async ({ city }) => text(JSON.stringify({ city, tempC: 19 })),
  );
  server.registerTool(
    'send_alert',
    { description: 'Send a weather alert to every subscriber.', inputSchema: z.object({ message: z.string() }) },
    async () => text('sent'),
  );
  return server;
});
