import { ActionClass } from '@zmodu/guard';
import { isActionClass } from '@zmodu/guard/internal';
import { MAX_SKILL_TIMEOUT_MS } from '@zmodu/skills/internal';
import { InvalidMcpServerOptionsException } from '../exceptions/invalid-mcp-server-options.exception';
import {
  DEFAULT_MCP_CONNECT_TIMEOUT_MS,
  DEFAULT_MCP_MAX_RESULT_BYTES,
  DEFAULT_MCP_MAX_DESCRIPTION_LENGTH,
  DEFAULT_MCP_MAX_MESSAGE_BYTES,
  DEFAULT_MCP_MAX_SCHEMA_BYTES,
  DEFAULT_MCP_MAX_TOOL_BYTES_PER_SERVER,
  DEFAULT_MCP_MAX_TOOLS,
  DEFAULT_MCP_RECONNECT_DELAY_MS,
  DEFAULT_MCP_RECONNECT_MAX_DELAY_MS,
  DEFAULT_MCP_TIMEOUT_MS,
  MAX_MCP_MAX_DESCRIPTION_LENGTH,
  MAX_MCP_MAX_MESSAGE_BYTES,
  MAX_MCP_MAX_RESULT_BYTES,
  MAX_MCP_MAX_SCHEMA_BYTES,
  MAX_MCP_MAX_TOOL_BYTES_PER_SERVER,
  MAX_MCP_MAX_TOOLS,
  MCP_SERVER_NAME_PATTERN,
  MCP_TOOL_NAME_MAX_LENGTH,
  MIN_MCP_MAX_MESSAGE_BYTES,
  McpEra,
  McpServerOptions,
  NormalizedMcpServer,
} from './mcp-server-options';

const KEYS = new Set([
  'name',
  'command',
  'args',
  'env',
  'cwd',
  'url',
  'headers',
  'required',
  'timeoutMs',
  'connectTimeoutMs',
  'tenantScoped',
  'requiredPermission',
  'maxResultBytes',
  'maxMessageBytes',
  'maxTools',
  'maxSchemaBytes',
  'maxDescriptionLength',
  'maxToolBytesPerServer',
  'trustReadOnlyHint',
  'actions',
  'reconnectDelayMs',
  'reconnectMaxDelayMs',
  'era',
]);

const ERAS: readonly string[] = ['auto', 'legacy', 'modern'];

/** Check the `mcpServers` option and fill defaults. Throws InvalidMcpServerOptionsException naming the field to fix. */
export function validateMcpServers(raw: unknown): NormalizedMcpServer[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new InvalidMcpServerOptionsException(0, undefined, 'mcpServers must be an array of server entries');
  const names = new Set<string>();
  return raw.map((entry: unknown, index) => {
    const server = validateMcpServer(entry as McpServerOptions, index);
    if (names.has(server.name))
      throw new InvalidMcpServerOptionsException(index, server.name, 'name is taken by another entry: names must be unique');
    names.add(server.name);
    return server;
  });
}

function validateMcpServer(entry: McpServerOptions, index: number): NormalizedMcpServer {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    throw new InvalidMcpServerOptionsException(index, undefined, 'the entry must be an object');
  const fail = (problem: string): never => {
    throw new InvalidMcpServerOptionsException(index, entry.name, problem);
  };
  const unknown = Object.keys(entry).filter((k) => !KEYS.has(k));
  if (unknown.length) fail(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k}'`).join(', ')}`);
  if (typeof entry.name !== 'string' || !MCP_SERVER_NAME_PATTERN.test(entry.name))
    fail(
      `name must be one lower-case word of letters, digits and '_' (at most 32, starting with a letter; it becomes the first segment of '<name>.<tool>'), got ${JSON.stringify(entry.name)}`,
    );
  const has = (key: string) => Object.hasOwn(entry, key) && (entry as unknown as Record<string, unknown>)[key] !== undefined;
  if (has('command') === has('url')) fail('give exactly one of command (a server started over stdio) or url (Streamable HTTP)');
  const common = {
    name: entry.name,
    required: optionalBoolean(entry.required, 'required', fail) ?? true,
    timeoutMs: optionalTimeout(entry.timeoutMs, 'timeoutMs', fail) ?? DEFAULT_MCP_TIMEOUT_MS,
    connectTimeoutMs: optionalTimeout(entry.connectTimeoutMs, 'connectTimeoutMs', fail) ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS,
    tenantScoped: optionalBoolean(entry.tenantScoped, 'tenantScoped', fail) ?? true,
    ...sizes(entry, fail),
    trustReadOnlyHint: optionalBoolean(entry.trustReadOnlyHint, 'trustReadOnlyHint', fail) ?? false,
    actions: actions(entry.actions, fail),
    maxTools: optionalCount(entry.maxTools, 'maxTools', 'tools', MAX_MCP_MAX_TOOLS, fail) ?? DEFAULT_MCP_MAX_TOOLS,
    ...reconnect(entry, fail),
    era: era(entry.era, fail),
    ...(entry.requiredPermission !== undefined ? { requiredPermission: entry.requiredPermission } : {}),
  };
  if (entry.requiredPermission !== undefined && (typeof entry.requiredPermission !== 'string' || entry.requiredPermission === ''))
    fail('requiredPermission must be a non-empty string when given');
  if (has('url')) {
    for (const key of ['args', 'env', 'cwd']) if (has(key)) fail(`${key} belongs to a stdio server (command); a url server takes headers`);
    return Object.freeze({
      ...common,
      transport: 'http' as const,
      url: httpUrl(entry.url, fail),
      args: [],
      headers: headers(entry.headers, fail),
    });
  }
  if (has('headers')) fail('headers belongs to a url server; a stdio server (command) takes env');
  if (typeof entry.command !== 'string' || entry.command.trim() === '')
    fail('command must be a non-empty string, e.g. "npx" or "/usr/local/bin/mcp-weather"');
  if (entry.args !== undefined && !(Array.isArray(entry.args) && entry.args.every((a) => typeof a === 'string')))
    fail('args must be an array of strings');
  if (entry.cwd !== undefined && (typeof entry.cwd !== 'string' || entry.cwd === '')) fail('cwd must be a non-empty string');
  return Object.freeze({
    ...common,
    transport: 'stdio' as const,
    command: entry.command,
    args: Object.freeze([...(entry.args ?? [])]),
    ...(entry.env !== undefined ? { env: stringRecord(entry.env, 'env', fail) } : {}),
    ...(entry.cwd !== undefined ? { cwd: entry.cwd } : {}),
    headers: {},
  });
}

/** The size caps of an entry, each in its range and consistent with the others. */
function sizes(entry: McpServerOptions, fail: (problem: string) => never) {
  const maxResultBytes =
    optionalCount(entry.maxResultBytes, 'maxResultBytes', 'bytes', MAX_MCP_MAX_RESULT_BYTES, fail) ?? DEFAULT_MCP_MAX_RESULT_BYTES;
  const givenMessage = optionalCount(entry.maxMessageBytes, 'maxMessageBytes', 'bytes', MAX_MCP_MAX_MESSAGE_BYTES, fail);
  if (givenMessage !== undefined && givenMessage < MIN_MCP_MAX_MESSAGE_BYTES)
    fail(`maxMessageBytes must be at least ${MIN_MCP_MAX_MESSAGE_BYTES} bytes (got ${givenMessage}): a tools/list page must fit`);
  if (givenMessage !== undefined && givenMessage < maxResultBytes)
    fail(
      `maxMessageBytes (${givenMessage}) is smaller than maxResultBytes (${maxResultBytes}): a result that size could never arrive; raise maxMessageBytes or lower maxResultBytes`,
    );
  // A result may come twice in its message (as text and as structuredContent).
  const maxMessageBytes = givenMessage ?? Math.min(MAX_MCP_MAX_MESSAGE_BYTES, Math.max(DEFAULT_MCP_MAX_MESSAGE_BYTES, 2 * maxResultBytes));
  const maxSchemaBytes =
    optionalCount(entry.maxSchemaBytes, 'maxSchemaBytes', 'bytes', MAX_MCP_MAX_SCHEMA_BYTES, fail) ?? DEFAULT_MCP_MAX_SCHEMA_BYTES;
  const maxDescriptionLength =
    optionalCount(entry.maxDescriptionLength, 'maxDescriptionLength', 'characters', MAX_MCP_MAX_DESCRIPTION_LENGTH, fail) ??
    DEFAULT_MCP_MAX_DESCRIPTION_LENGTH;
  const maxToolBytesPerServer =
    optionalCount(entry.maxToolBytesPerServer, 'maxToolBytesPerServer', 'bytes', MAX_MCP_MAX_TOOL_BYTES_PER_SERVER, fail) ??
    Math.max(DEFAULT_MCP_MAX_TOOL_BYTES_PER_SERVER, maxSchemaBytes);
  if (maxToolBytesPerServer < maxSchemaBytes)
    fail(
      `maxToolBytesPerServer (${maxToolBytesPerServer}) is smaller than maxSchemaBytes (${maxSchemaBytes}): a tool of that schema size could never be registered; raise maxToolBytesPerServer or lower maxSchemaBytes`,
    );
  return { maxResultBytes, maxMessageBytes, maxSchemaBytes, maxDescriptionLength, maxToolBytesPerServer };
}

/** The application's classes of tools: `{ '<tool name as listed>': 'read' | 'propose' | 'execute' }`. */
function actions(value: unknown, fail: (problem: string) => never): ReadonlyMap<string, ActionClass> {
  const out = new Map<string, ActionClass>();
  if (value === undefined) return out;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail("actions must be an object of tool names (as the server lists them) to 'read', 'propose' or 'execute'");
  for (const tool of Object.keys(value as object)) {
    const action = (value as Record<string, unknown>)[tool];
    if (tool === '' || tool.length > MCP_TOOL_NAME_MAX_LENGTH)
      fail(`actions has a tool name of ${tool.length} characters: a tool name is 1 to ${MCP_TOOL_NAME_MAX_LENGTH} characters`);
    if (!isActionClass(action))
      fail(`actions[${JSON.stringify(tool)}] must be 'read', 'propose' or 'execute' (got ${JSON.stringify(action) ?? String(action)})`);
    out.set(tool, action as ActionClass);
  }
  return out;
}

function era(value: unknown, fail: (problem: string) => never): McpEra {
  if (value === undefined) return 'auto';
  if (typeof value !== 'string' || !ERAS.includes(value))
    fail(
      `era must be 'auto' (probe, then 2026-07-28 or the 2025 handshake), 'legacy' (2025 initialize only) or 'modern' (2026-07-28 only), got ${JSON.stringify(value) ?? String(value)}`,
    );
  return value as McpEra;
}

function reconnect(entry: McpServerOptions, fail: (problem: string) => never) {
  const reconnectDelayMs = optionalTimeout(entry.reconnectDelayMs, 'reconnectDelayMs', fail) ?? DEFAULT_MCP_RECONNECT_DELAY_MS;
  const reconnectMaxDelayMs =
    optionalTimeout(entry.reconnectMaxDelayMs, 'reconnectMaxDelayMs', fail) ??
    Math.max(DEFAULT_MCP_RECONNECT_MAX_DELAY_MS, reconnectDelayMs);
  if (reconnectMaxDelayMs < reconnectDelayMs)
    fail(
      `reconnectMaxDelayMs (${reconnectMaxDelayMs}) is smaller than reconnectDelayMs (${reconnectDelayMs}); raise it or lower reconnectDelayMs`,
    );
  return { reconnectDelayMs, reconnectMaxDelayMs };
}

function httpUrl(value: unknown, fail: (problem: string) => never): URL {
  if (typeof value !== 'string') return fail('url must be a string, e.g. "https://tools.example.com/mcp"');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail('url is not a valid URL; give an absolute http(s) URL, e.g. "https://tools.example.com/mcp"');
  }
  // The protocol only: the rest of the URL may hold a credential.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`url must be http: or https: (got ${url.protocol})`);
  if (url.username || url.password)
    fail(
      "url must not hold a user name or password (fetch refuses it, and errors would print it): put credentials in headers, e.g. { Authorization: 'Basic …' }",
    );
  return url;
}

/** RFC 7230 `token`: the characters of a header name. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 7230 `field-value` as fetch takes it: visible characters, spaces and tabs; no CR, LF, NUL or other control. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function headers(value: unknown, fail: (problem: string) => never): Readonly<Record<string, string>> {
  if (value === undefined) return Object.freeze({});
  const out = stringRecord(value, 'headers', fail);
  for (const [name, v] of Object.entries(out)) {
    if (!HEADER_NAME.test(name))
      fail(`headers has an invalid name ${JSON.stringify(name).slice(0, 80)}: a header name is letters, digits and !#$%&'*+-.^_\`|~ only`);
    // The value is never shown: it may be a secret.
    if (!HEADER_VALUE.test(v))
      fail(
        `headers.${name} has an invalid value (the value is not shown): it holds a CR, LF, NUL or other control character, or a character outside Latin-1; check how it is built`,
      );
  }
  return out;
}

/** Names and values must be strings. A value is never echoed: it may be a secret. */
function stringRecord(value: unknown, field: string, fail: (problem: string) => never): Readonly<Record<string, string>> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(`${field} must be an object of string values`);
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of Object.keys(value as object)) {
    const v = (value as Record<string, unknown>)[key];
    if (typeof v !== 'string') fail(`${field}.${key} must be a string (got a ${v === null ? 'null' : typeof v})`);
    out[key] = v as string;
  }
  return Object.freeze(out);
}

function optionalBoolean(value: unknown, field: string, fail: (problem: string) => never): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') fail(`${field} must be true or false`);
  return value as boolean | undefined;
}

function optionalTimeout(value: unknown, field: string, fail: (problem: string) => never): number | undefined {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) > 0 && (value as number) <= MAX_SKILL_TIMEOUT_MS))
    fail(`${field} must be a whole number of ms from 1 to ${MAX_SKILL_TIMEOUT_MS} (got ${String(value)})`);
  return value as number | undefined;
}

function optionalCount(value: unknown, field: string, unit: string, max: number, fail: (problem: string) => never): number | undefined {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) > 0 && (value as number) <= max))
    fail(`${field} must be a whole number of ${unit} from 1 to ${max} (got ${String(value)})`);
  return value as number | undefined;
}
