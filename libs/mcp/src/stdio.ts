import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { stdioSdk } from './mcp-sdk';
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
 * Serve the skill catalog over stdio for a fixed principal, in either protocol era: the SDK's `serveStdio` decides it
 * from the client's first message (`initialize` for a 2025-era client, `server/discover` or an enveloped request for a
 * 2026-07-28 one) and pins the connection to it. One session (one guard, run id and call queue) for the connection.
 * Every call still goes through the dispatcher under the policy; log to stderr, never to the output.
 */
export async function serveMcpOverStdio(options: McpStdioOptions): Promise<McpStdioSession> {
  const { input = process.stdin, output = process.stdout, ...rest } = options;
  const sdk = stdioSdk('serveMcpOverStdio');
  const server = createMcpSkillServer(rest);
  const transport = new ClosingTransport(new sdk.StdioServerTransport(input, output));
  let first = true;
  // The first instance is the session's own; the entry asks for another only to answer a probe it then discards.
  const handle = sdk.serveStdio(() => (first ? ((first = false), server.server) : server.createSdkServer()), { transport });
  // The SDK's stdio transport closes when its input ends; if the stream only closes, end the connection too.
  const onEnd = () => void handle.close();
  input.once('end', onEnd);
  input.once('close', onEnd);
  void transport.closed.then(() => {
    input.off('end', onEnd);
    input.off('close', onEnd);
  });
  return { server, closed: transport.closed, close: () => handle.close() };
}

/** A transport that tells when it closed (`closed`), whoever closed it: the entry owns the one it wraps. */
class ClosingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly closed: Promise<void>;

  constructor(private readonly inner: Transport) {
    let resolve!: () => void;
    this.closed = new Promise<void>((r) => (resolve = r));
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      try {
        this.onclose?.();
      } finally {
        resolve();
      }
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
