import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpSkillServer, McpSkillServer, McpSkillServerOptions } from './mcp-skill-server';
import { McpPrincipal } from './mcp-principal';

export interface McpStdioOptions extends Omit<McpSkillServerOptions, 'principal'> {
  /** The one caller of the process: stdio has no authentication of its own, the operator who starts it names it. */
  readonly principal: McpPrincipal;
  /** Default process.stdin / process.stdout. Only JSON-RPC is written to `output`. */
  readonly input?: Readable;
  readonly output?: Writable;
}

/** A running stdio server: `closed` settles when the client ends the input (or `close()` is called). */
export interface McpStdioSession {
  readonly server: McpSkillServer;
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serve the skill catalog over stdio (one session: one server, one transport) for a fixed principal.
 * Every call still goes through the dispatcher under the policy; log to stderr, never to the output.
 */
export async function serveMcpOverStdio(options: McpStdioOptions): Promise<McpStdioSession> {
  const { input = process.stdin, output = process.stdout, ...rest } = options;
  const server = createMcpSkillServer(rest);
  const transport = new StdioServerTransport(input, output);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  server.server.onclose = () => resolveClosed();
  // The SDK's stdio transport does not close when its input ends: the client has gone, so close.
  const onEnd = () => void server.close();
  input.once('end', onEnd);
  input.once('close', onEnd);
  await server.connect(transport);
  void closed.then(() => {
    input.off('end', onEnd);
    input.off('close', onEnd);
  });
  return { server, closed, close: () => server.close() };
}
