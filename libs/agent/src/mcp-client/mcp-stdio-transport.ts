import { ChildProcess, spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { LineFramer, oversizeResponse } from './mcp-oversize';
import { clientSdk, clientStdioSdk } from './mcp-sdk';

export interface McpStdioTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to a minimal environment (HOME, PATH, ...): the app's own variables are not passed on. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Longest line read from the child's stdout; a longer one is dropped and answered by oversizeResponse. */
  readonly maxMessageBytes: number;
  /** How long close() waits for the child at each step (stdin closed, then SIGTERM, then SIGKILL). */
  readonly terminateWaitMs: number;
}

/**
 * The client transport of a server started as a child process, spoken to over its stdin and stdout (newline-delimited
 * JSON-RPC, as the MCP stdio transport is). Unlike the SDK's, whose read buffer closed the connection for good at one
 * line over 10 MiB, a line past `maxMessageBytes` is dropped as it streams in (never held) and the request it answered
 * fails alone (oversizeResponse); a line that is not JSON-RPC is reported (onerror) and skipped. The connection closes
 * only when the child exits or close() is called.
 */
export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The child's stderr, available before start() (so that its first lines are not lost). */
  readonly stderr = new PassThrough();
  private child?: ChildProcess;
  private closed = false;
  private readonly framer: LineFramer;

  constructor(private readonly options: McpStdioTransportOptions) {
    this.framer = new LineFramer(options.maxMessageBytes);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('McpStdioTransport already started');
    return new Promise<void>((resolve, reject) => {
      const child = spawn(this.options.command, [...this.options.args], {
        env: { ...clientStdioSdk().getDefaultEnvironment(), ...this.options.env },
        ...(this.options.cwd ? { cwd: this.options.cwd } : {}),
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolve());
      child.once('close', () => this.ended());
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => this.read(chunk));
      child.stderr?.pipe(this.stderr);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (this.closed || !stdin || stdin.destroyed) return Promise.reject(new Error('Not connected'));
    return new Promise<void>((resolve, reject) => {
      const ok = stdin.write(`${JSON.stringify(message)}\n`, (err) => (err ? reject(err) : undefined));
      if (ok) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** End the child: stdin closed, then SIGTERM, then SIGKILL, each after `terminateWaitMs`. */
  async close(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
      const waited = () => Promise.race([exited, new Promise<void>((r) => setTimeout(r, this.options.terminateWaitMs).unref())]);
      child.stdin?.end();
      await waited();
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        if (child.exitCode !== null || child.signalCode !== null) break;
        child.kill(signal);
        await waited();
      }
    }
    this.ended();
  }

  private read(chunk: Buffer): void {
    for (const framed of this.framer.push(chunk)) {
      if ('oversize' in framed) {
        // Not held, not parsed: the request it answered gets our error; a message without an id is just gone.
        if (framed.oversize !== undefined) this.onmessage?.(oversizeResponse(framed.oversize, this.options.maxMessageBytes));
        else this.onerror?.(new Error(`a message over maxMessageBytes (${this.options.maxMessageBytes} bytes) was dropped`));
        continue;
      }
      if (framed.unit.length === 0) continue;
      let message: JSONRPCMessage;
      try {
        message = clientSdk().parseJSONRPCMessage(JSON.parse(framed.unit.toString('utf8')));
      } catch (err) {
        this.onerror?.(new Error(`a line that is not a JSON-RPC message was skipped: ${(err as Error)?.message ?? String(err)}`));
        continue;
      }
      this.onmessage?.(message);
    }
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
