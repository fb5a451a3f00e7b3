import type { ServerResponse } from 'node:http';

/** A JSON-RPC error response, as the MCP transports answer a request they refuse (`id` null: no request was read). */
export interface JsonRpcErrorBody {
  readonly jsonrpc: '2.0';
  readonly id: null;
  readonly error: { readonly code: number; readonly message: string };
}

/**
 * The JSON-RPC body for an HTTP error on the MCP endpoint, for errors the application's HTTP edge
 * raises before the endpoint runs (its authentication, rate limit, body parser): an MCP client
 * expects a JSON-RPC error. 400 (the body parser refused the body) is a parse error (-32700),
 * 404 an unknown session (-32001), anything else a server error (-32000).
 */
export function jsonRpcErrorBody(status: number, message: string): JsonRpcErrorBody {
  const code = status === 400 ? -32700 : status === 404 ? -32001 : -32000;
  return { jsonrpc: '2.0', id: null, error: { code, message } };
}

/** @internal Write a JSON-RPC error with its own code. */
export function writeJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}
