import type * as ClientSdkModule from '@modelcontextprotocol/client';
import type * as ClientStdioModule from '@modelcontextprotocol/client/stdio';
import { MCP_CLIENT_SDK_BROKEN_MESSAGE, MCP_CLIENT_SDK_MISSING_MESSAGE, MCP_CLIENT_SDK_TOO_OLD_MESSAGE } from '../agent.messages';
import { McpClientSdkMissingException } from '../exceptions/mcp-sdk-missing.exception';

/** The MCP client SDK (v2), an optional peer dependency: loaded when AgentModule has mcpServers, never at import. */
export const CLIENT_SDK = '@modelcontextprotocol/client';
/** The range of it this package is built and tested against (its peerDependencies). */
export const CLIENT_SDK_RANGE = '^2.4.0';

export type ClientSdk = typeof ClientSdkModule;
export type ClientStdioSdk = typeof ClientStdioModule;

/** What we use of it: an older 2.x without them cannot negotiate the protocol era. */
const NEEDED: readonly (keyof ClientSdk)[] = [
  'Client',
  'StreamableHTTPClientTransport',
  'ProtocolError',
  'SdkError',
  'SdkHttpError',
  'parseJSONRPCMessage',
];

let client: ClientSdk | undefined;
let stdio: ClientStdioSdk | undefined;

/** The SDK's CommonJS build (its `require` condition), loaded once; McpClientSdkMissingException names what to install. */
export function clientSdk(): ClientSdk {
  if (client) return client;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = load<ClientSdk>(() => require('@modelcontextprotocol/client'), CLIENT_SDK);
  const missing = NEEDED.filter((name) => !Object.hasOwn(loaded, name) || loaded[name] === undefined);
  if (missing.length) throw new McpClientSdkMissingException(MCP_CLIENT_SDK_TOO_OLD_MESSAGE(CLIENT_SDK, CLIENT_SDK_RANGE, missing));
  return (client = loaded);
}

/** `@modelcontextprotocol/client/stdio` (getDefaultEnvironment), loaded once. */
export function clientStdioSdk(): ClientStdioSdk {
  clientSdk();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (stdio ??= load<ClientStdioSdk>(() => require('@modelcontextprotocol/client/stdio'), `${CLIENT_SDK}/stdio`));
}

// The require is written out at each call (a literal specifier), so that a bundler (the sample's webpack build) keeps it
// external instead of turning a variable require into a module context that finds nothing.
function load<T>(requireIt: () => unknown, specifier: string): T {
  try {
    return requireIt() as T;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const message = String((err as Error | null)?.message ?? err);
    // Only this package missing (not one of its own dependencies, which is a broken install).
    if (code === 'MODULE_NOT_FOUND' && message.includes(`'${CLIENT_SDK}`))
      throw new McpClientSdkMissingException(MCP_CLIENT_SDK_MISSING_MESSAGE(CLIENT_SDK, CLIENT_SDK_RANGE));
    throw new McpClientSdkMissingException(MCP_CLIENT_SDK_BROKEN_MESSAGE(specifier, message));
  }
}
