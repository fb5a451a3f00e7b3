import type { Tool } from '@modelcontextprotocol/client';
import { SkillError } from '@zmodu/skills';
import { SkillHandler } from '@zmodu/skills/internal';
import { McpUnavailableError } from '../exceptions/mcp-unavailable.error';
import type { McpConnection } from './mcp-connection';
import { describeCause, redact } from './mcp-describe';
import { isOversize } from './mcp-oversize';
import { clientSdk } from './mcp-sdk';
import { NormalizedMcpServer } from './mcp-server-options';

/** Longest error text of a tool or a transport that reaches the model. */
const MAX_ERROR_TEXT = 2000;

interface ContentBlock {
  readonly type: string;
  readonly text?: string;
  readonly mimeType?: string;
  readonly uri?: string;
  readonly resource?: { readonly uri?: string; readonly mimeType?: string; readonly text?: string };
}

interface ToolResult {
  readonly content?: readonly ContentBlock[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly toolResult?: unknown;
}

/**
 * The handler of the skill for one MCP tool: `tools/call` with the original tool name, under the call's signal
 * (it aborts at the skill's deadline or when the run is aborted) and the server's request timeout.
 * A result with `isError: true` is a SkillError the model sees (`ToolError`, `mcp_tool_error`, the tool's text);
 * a transport or protocol failure is one too (`mcp_unavailable` with `retryAfterMs` while the connection is reopened,
 * `mcp_timeout`, `mcp_error`), never an exception that ends the run; no error text carries the entry's URL query,
 * header or env values (`redact`), and a result past `maxResultBytes` (or a message past `maxMessageBytes`, dropped by
 * the transport) is `mcp_result_too_large`. Only the dispatcher calls it, after guard, permission, schema and tenant.
 */
export function mcpToolHandler(connection: McpConnection, definition: Tool): SkillHandler {
  const server = connection.server;
  const { timeoutMs, maxResultBytes } = server;
  const tool = definition.name;
  const sdk = clientSdk();
  return async (args, invocation) => {
    let result: ToolResult;
    try {
      result = (await connection.callTool(definition, args as Record<string, unknown> | undefined, {
        signal: invocation.signal,
        timeout: timeoutMs,
      })) as ToolResult;
    } catch (err) {
      // An HTTP server that no longer knows our session (it restarted): reopen, as for a stdio child that exited.
      if (err instanceof sdk.SdkHttpError && err.status === 404) connection.lost();
      throw transportError(connection, tool, err);
    }
    if (result.isError === true)
      throw new SkillError(
        'mcp_tool_error',
        clip(redact(textOf(result.content), server) || `the tool '${tool}' reported an error`),
        undefined,
        'ToolError',
      );
    return capped(valueOf(result), server.name, tool, maxResultBytes);
  };
}

/**
 * The value when its JSON fits in `maxResultBytes`; else the tool error `mcp_result_too_large`, with none of it
 * (a truncated JSON would be a different value, and a server could use the cut to hide what follows).
 */
function capped(value: unknown, server: string, tool: string, maxResultBytes: number): unknown {
  if (Buffer.byteLength(JSON.stringify(value) ?? 'null') <= maxResultBytes) return value;
  throw tooLarge(server, tool, maxResultBytes, 'maxResultBytes');
}

function tooLarge(server: string, tool: string, max: number, option: 'maxResultBytes' | 'maxMessageBytes'): SkillError {
  return new SkillError(
    'mcp_result_too_large',
    `the MCP server '${server}' answered '${tool}' with more than ${max} bytes (${option}): nothing of it is passed on; ask for less (a narrower query, a page) or do without it`,
    { [option]: max },
    'ToolError',
  );
}

/** The value the model sees: structured content when the tool gives it, else its text (parsed when it is JSON). */
export function valueOf(result: ToolResult): unknown {
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  if (!Array.isArray(result.content)) return result.toolResult ?? null;
  const parts = result.content.map(blockValue);
  return parts.length === 1 ? parts[0] : parts;
}

function blockValue(block: ContentBlock): unknown {
  if (block?.type === 'text' && typeof block.text === 'string') return parseOrText(block.text);
  if (block?.type === 'resource' && typeof block.resource?.text === 'string') return parseOrText(block.resource.text);
  // Binary content (image, audio, a blob resource) is named, not passed on: the model reads JSON.
  const described: Record<string, unknown> = { type: String(block?.type) };
  if (typeof block?.mimeType === 'string') described.mimeType = block.mimeType;
  const uri = block?.uri ?? block?.resource?.uri;
  if (typeof uri === 'string') described.uri = uri;
  return described;
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function textOf(content: readonly ContentBlock[] | undefined): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n')
    .trim();
}

function transportError(connection: McpConnection, tool: string, err: unknown): SkillError {
  const server = connection.server;
  const { ProtocolError, SdkError, SdkErrorCode } = clientSdk();
  if (err instanceof ProtocolError && isOversize(err.data)) return tooLarge(server.name, tool, server.maxMessageBytes, 'maxMessageBytes');
  if (err instanceof McpUnavailableError) return unavailable(server, tool, err.why, err.retryAfterMs);
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout)
    return new SkillError(
      'mcp_timeout',
      `the MCP server '${server.name}' did not answer '${tool}' within ${server.timeoutMs} ms`,
      undefined,
      'ToolError',
    );
  // The server answered with a JSON-RPC error (in v2 a ProtocolError; a local failure is an SdkError).
  if (err instanceof ProtocolError)
    return new SkillError(
      'mcp_error',
      clip(`the MCP server '${server.name}' refused '${tool}': ${redact(err.message, server)}`),
      undefined,
      'ToolError',
    );
  return unavailable(server, tool, describeCause(err, server), connection.retryAfterMs());
}

/** `mcp_unavailable`, with when to try again: the next attempt to reopen the connection (at least a second). */
function unavailable(server: NormalizedMcpServer, tool: string, why: string, retryAfterMs: number): SkillError {
  const wait = Math.max(1000, Math.ceil(retryAfterMs / 1000) * 1000);
  return new SkillError(
    'mcp_unavailable',
    clip(`the MCP server '${server.name}' could not be reached for '${tool}' (${why}); try again in ${wait / 1000} s or do without it`),
    { retryAfterMs: wait },
    'ToolError',
  );
}

function clip(text: string): string {
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}...` : text;
}
