import type * as ServerSdkModule from '@modelcontextprotocol/server';
import type * as StdioSdkModule from '@modelcontextprotocol/server/stdio';
import { McpSdkMissingException } from './exceptions/mcp-sdk-missing.exception';
import { MCP_SDK_BROKEN_MESSAGE, MCP_SDK_MISSING_MESSAGE, MCP_SDK_TOO_OLD_MESSAGE } from './mcp.messages';

/** The MCP server SDK (v2), an optional peer dependency: loaded the first time a server is made, never at import. */
export const SERVER_SDK = '@modelcontextprotocol/server';
/** The range of it this package is built and tested against (its peerDependencies). */
export const SERVER_SDK_RANGE = '^2.4.0';

export type ServerSdk = typeof ServerSdkModule;
export type StdioSdk = typeof StdioSdkModule;

/** What we use of it: an older 2.x without them cannot serve both eras. */
const NEEDED: readonly (keyof ServerSdk)[] = [
  'Server',
  'ProtocolError',
  'createMcpHandler',
  'isLegacyRequest',
  'WebStandardStreamableHTTPServerTransport',
];

let server: ServerSdk | undefined;
let stdio: StdioSdk | undefined;

/**
 * The SDK's CommonJS build (its `require` condition: our packages compile to CommonJS), loaded once. `who` names the
 * caller in the error when it is not installed (McpSdkMissingException: which package to install, and how).
 */
export function serverSdk(who: string): ServerSdk {
  if (server) return server;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = load<ServerSdk>(() => require('@modelcontextprotocol/server'), SERVER_SDK, who);
  const missing = NEEDED.filter((name) => !Object.hasOwn(loaded, name) || loaded[name] === undefined);
  if (missing.length) throw new McpSdkMissingException(MCP_SDK_TOO_OLD_MESSAGE(who, SERVER_SDK, SERVER_SDK_RANGE, missing));
  return (server = loaded);
}

/** `@modelcontextprotocol/server/stdio` (serveStdio, StdioServerTransport), loaded once. */
export function stdioSdk(who: string): StdioSdk {
  serverSdk(who);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (stdio ??= load<StdioSdk>(() => require('@modelcontextprotocol/server/stdio'), `${SERVER_SDK}/stdio`, who));
}

// The require is written out at each call (a literal specifier), so that a bundler (the sample's webpack build) keeps it
// external instead of turning a variable require into a module context that finds nothing.
function load<T>(requireIt: () => unknown, specifier: string, who: string): T {
  try {
    return requireIt() as T;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const message = String((err as Error | null)?.message ?? err);
    // Only this package missing (not one of its own dependencies, which is a broken install).
    if (code === 'MODULE_NOT_FOUND' && message.includes(`'${SERVER_SDK}`))
      throw new McpSdkMissingException(MCP_SDK_MISSING_MESSAGE(who, SERVER_SDK, SERVER_SDK_RANGE));
    throw new McpSdkMissingException(MCP_SDK_BROKEN_MESSAGE(who, specifier, message));
  }
}
