import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';
import { McpPrincipal } from './mcp-principal';
import { AUDIENCE_MISMATCH_MESSAGE, INVALID_OPTION_MESSAGE } from './mcp.messages';

/**
 * MCP authorization (the specification's OAuth 2.1 profile) for the Streamable HTTP endpoint: the endpoint is a
 * resource server. The application's own authentication still checks each token (its guard, or the principal
 * resolver); McpModule adds what the specification asks of a resource server on top of it.
 */
export interface McpAuthorizationOptions {
  /**
   * This endpoint's resource identifier (RFC 8707, RFC 9728 `resource`): its canonical URL as clients reach it, e.g.
   * 'https://api.example.com/mcp'. A token is accepted only when its audience names it. https (http only for a
   * loopback host), no fragment.
   */
  readonly resource: string;
  /** The issuers of the authorization servers that mint tokens for it (RFC 8414 issuer URLs); at least one. */
  readonly authorizationServers: readonly string[];
  /** `scopes_supported` of the metadata, and the `scope` of the 401 challenge. Default: none listed. */
  readonly scopesSupported?: readonly string[];
  /** `resource_name` of the metadata: a name for people. */
  readonly resourceName?: string;
  /** `resource_documentation` of the metadata: a page about the endpoint for developers. */
  readonly resourceDocumentation?: string;
}

/** The protected resource metadata document (RFC 9728 section 2), as served. */
export interface McpProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly scopes_supported?: readonly string[];
  readonly resource_name?: string;
  readonly resource_documentation?: string;
}

/** McpAuthorizationOptions checked, with what follows from them. */
export class ResolvedMcpAuthorization {
  /** The canonical resource identifier (lower-case scheme and host, no trailing slash). */
  readonly resource: string;
  /** Where the metadata is served: `/.well-known/oauth-protected-resource` + the resource's path (RFC 9728 section 3.1). */
  readonly metadataPath: string;
  readonly metadataUrl: string;
  readonly document: McpProtectedResourceMetadata;
  private readonly scope?: string;

  constructor(raw: McpAuthorizationOptions) {
    const fail = (field: string, rule: string): never => {
      throw new InvalidMcpOptionsException(INVALID_OPTION_MESSAGE(`authorization.${field}`, rule));
    };
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      fail('', "must be { resource: 'https://api.example.com/mcp', authorizationServers: ['https://auth.example.com'] }");
    const own = <K extends keyof McpAuthorizationOptions>(k: K) => (Object.hasOwn(raw, k) ? raw[k] : undefined);
    const unknown = Object.keys(raw).filter((k) => !KEYS.has(k));
    if (unknown.length) fail(unknown[0], `is not an option (it takes ${[...KEYS].join(', ')})`);
    const resource = httpsUrl(
      own('resource'),
      (rule) => fail('resource', rule),
      'the URL of this MCP endpoint, e.g. https://api.example.com/mcp',
    );
    this.resource = canonicalResource(resource);
    const servers = own('authorizationServers');
    if (!Array.isArray(servers) || servers.length === 0)
      fail('authorizationServers', "must list at least one authorization server's issuer URL, e.g. ['https://auth.example.com']");
    const issuers = (servers as unknown[]).map((s, i) => {
      const url = httpsUrl(s, (rule) => fail(`authorizationServers[${i}]`, rule), 'an issuer URL, e.g. https://auth.example.com');
      if (url.search) fail(`authorizationServers[${i}]`, 'must have no query (an RFC 8414 issuer has none)');
      return url.href.replace(/\/$/, '');
    });
    const scopes = own('scopesSupported');
    if (scopes !== undefined && (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string' || !SCOPE.test(s))))
      fail('scopesSupported', 'must be an array of scope names (visible ASCII, no space, quote or backslash)');
    for (const key of ['resourceName', 'resourceDocumentation'] as const) {
      const value = own(key);
      if (value !== undefined && (typeof value !== 'string' || value === '')) fail(key, 'must be a non-empty string');
    }
    const documentation = own('resourceDocumentation');
    if (documentation !== undefined) httpsUrl(documentation, (rule) => fail('resourceDocumentation', rule), 'a page URL');
    const path = new URL(this.resource).pathname;
    this.metadataPath = `${WELL_KNOWN}${path === '/' ? '' : path}`;
    this.metadataUrl = `${new URL(this.resource).origin}${this.metadataPath}`;
    this.scope = scopes?.length ? scopes.join(' ') : undefined;
    this.document = Object.freeze({
      resource: this.resource,
      authorization_servers: Object.freeze(issuers),
      bearer_methods_supported: Object.freeze(['header']),
      ...(scopes?.length ? { scopes_supported: Object.freeze([...scopes]) } : {}),
      ...(own('resourceName') !== undefined ? { resource_name: own('resourceName') as string } : {}),
      ...(documentation !== undefined ? { resource_documentation: documentation } : {}),
    });
  }

  /**
   * The `WWW-Authenticate` value of a 401 (RFC 6750 section 3, RFC 9728 section 5.1): the metadata URL, the scopes,
   * and for a token that was presented and refused, `error="invalid_token"` with why.
   */
  challenge(error?: { readonly description: string }): string {
    const params = [`resource_metadata="${quoted(this.metadataUrl)}"`];
    if (this.scope) params.push(`scope="${quoted(this.scope)}"`);
    if (error) params.unshift(`error="invalid_token"`, `error_description="${quoted(error.description)}"`);
    return `Bearer ${params.join(', ')}`;
  }

  /** Why this principal's token may not be used here (its audience does not name this resource), or null. */
  audienceProblem(principal: McpPrincipal): string | null {
    const audience = principal.audience ?? [];
    if (audience.some((a) => sameResource(a, this.resource))) return null;
    return AUDIENCE_MISMATCH_MESSAGE(this.resource, audience.length > 0);
  }
}

const KEYS = new Set(['resource', 'authorizationServers', 'scopesSupported', 'resourceName', 'resourceDocumentation']);
const WELL_KNOWN = '/.well-known/oauth-protected-resource';
/** RFC 6749 scope-token: visible ASCII but space, `"` and `\`. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** An absolute https URL (http for a loopback host), no user info, no fragment. */
function httpsUrl(value: unknown, fail: (rule: string) => never, what: string): URL {
  if (typeof value !== 'string' || value === '') return fail(`must be ${what}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(`must be an absolute URL: ${what} (got ${JSON.stringify(value).slice(0, 80)})`);
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\./.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    fail(`must be an https: URL (http: only for localhost), got ${url.protocol}`);
  if (url.username || url.password) fail('must hold no user name or password');
  if (url.hash || value.includes('#')) fail('must have no fragment (#...)');
  return url;
}

/** The canonical form of a resource identifier: lower-case scheme and host (URL does that), no trailing slash. */
export function canonicalResource(url: URL): string {
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/** Whether an audience value names the resource (upper-case scheme and host accepted, as the specification asks). */
function sameResource(audience: string, resource: string): boolean {
  try {
    return canonicalResource(new URL(audience)) === resource;
  } catch {
    return false;
  }
}

function quoted(text: string): string {
  // A header value: no CR, LF or other control character; quotes and backslashes escaped (RFC 7230 quoted-string).
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/[\\"]/g, (c) => `\\${c}`);
}

/**
 * Node middleware of McpModule when `authorization` is set. On the endpoint: every 401 it answers, whoever answers it
 * (the application's guard, its exception filter, McpModule), carries the challenge naming the metadata. At the
 * metadata's path: the document (GET, public, any origin), before the application's guards.
 */
export function challengeMiddleware(auth: ResolvedMcpAuthorization) {
  return (_req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      if (args[0] === 401 && !this.hasHeader('www-authenticate')) this.setHeader('WWW-Authenticate', auth.challenge());
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
    next();
  };
}

export function metadataMiddleware(auth: ResolvedMcpAuthorization) {
  const body = JSON.stringify(auth.document);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, OPTIONS' };
    if (req.method === 'OPTIONS') return void res.writeHead(204, { ...cors, 'access-control-allow-headers': '*' }).end();
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { ...cors, allow: 'GET, OPTIONS' }).end();
    res
      .writeHead(200, {
        ...cors,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'max-age=3600',
      })
      .end(req.method === 'HEAD' ? undefined : body);
  };
}
