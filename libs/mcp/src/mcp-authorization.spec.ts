import {
  Client,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { FixtureApp, freePort, startFixtureApp } from './__fixtures__/mcp-app';
import { toolText as text } from './__fixtures__/tool-text';
import { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';
import { ResolvedMcpOptions } from './mcp.options';

// MCP authorization: the Streamable HTTP endpoint as an OAuth 2.1 resource server (the specification's
// authorization chapter, RFC 9728 protected resource metadata, RFC 8707 audience). The fixture's guard stands for the
// application's token check: it sets req.user (with the token's audience) from the bearer token, or answers 401.

const AUTHORIZATION = {
  resource: 'https://mcp.example.com/mcp',
  authorizationServers: ['https://auth.example.com'],
  scopesSupported: ['mcp:tools'],
  resourceName: 'Desk tools',
};

async function post(url: URL, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body ?? { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.text() };
}

describe('McpModule authorization (an OAuth 2.1 resource server)', () => {
  let fixture: FixtureApp;

  beforeAll(async () => {
    fixture = await startFixtureApp({ forRoot: { authorization: AUTHORIZATION } });
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('answers a request without a token 401 with a challenge naming its protected resource metadata', async () => {
    const res = await post(fixture.url, {});
    expect(res.status).toBe(401);
    expect(res.challenge).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"',
    );
    expect(JSON.parse(res.body).error.message).toMatch(/^Unauthorized/);
  });

  it("adds the challenge to the application's own 401 (a bad token its guard refuses), keeping its answer", async () => {
    const res = await post(fixture.url, { Authorization: 'Bearer forged-token' });
    expect(res.status).toBe(401);
    expect(res.challenge).toMatch(/^Bearer resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp"/);
    expect(res.body).toMatch(/unknown token/);
  });

  it('serves the metadata (RFC 9728) at the well-known path of the resource, before the guard, to any origin', async () => {
    const url = new URL('/.well-known/oauth-protected-resource/mcp', fixture.url);
    const res = await fetch(url, { headers: { Origin: 'https://inspector.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toEqual({
      resource: 'https://mcp.example.com/mcp',
      authorization_servers: ['https://auth.example.com'],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp:tools'],
      resource_name: 'Desk tools',
    });
    expect((await fetch(url, { method: 'OPTIONS' })).status).toBe(204);
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(405);
  });

  it('refuses a token minted for another service (its audience), 401 invalid_token, in both eras; takes one minted for this resource', async () => {
    const other = await post(fixture.url, { Authorization: 'Bearer alice-crm-token' });
    expect(other.status).toBe(401);
    expect(other.challenge).toMatch(/^Bearer error="invalid_token", error_description="the token was issued for another resource/);
    expect(other.challenge).toContain('resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"');
    expect(JSON.parse(other.body).error.message).toMatch(/request a token with resource=https:\/\/mcp\.example\.com\/mcp \(RFC 8707\)/);
    // A token with no audience at all (the fixture's other tokens): refused the same way, saying so.
    const none = await post(fixture.url, { Authorization: 'Bearer alice-token' });
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body).error.message).toMatch(/the token names no audience/);

    // Its audience in another spelling of the same resource (upper-case host, trailing slash): accepted, both eras.
    for (const mode of ['legacy', { pin: '2026-07-28' }] as const) {
      const transport = new StreamableHTTPClientTransport(fixture.url, {
        requestInit: { headers: { Authorization: 'Bearer alice-mcp-token' } },
      });
      const client = new Client({ name: 'auth-spec', version: '1' }, { versionNegotiation: { mode } });
      await client.connect(transport);
      try {
        expect(JSON.parse(text(await client.callTool({ name: 'desk.whoami', arguments: {} })))).toEqual({
          tenantId: 'acme',
          userId: 'alice',
        });
      } finally {
        await client.close();
      }
      // The same client with the other service's token does not get in.
      const refused = new Client({ name: 'auth-spec', version: '1' }, { versionNegotiation: { mode } });
      await expect(
        refused.connect(
          new StreamableHTTPClientTransport(fixture.url, { requestInit: { headers: { Authorization: 'Bearer alice-crm-token' } } }),
        ),
      ).rejects.toThrow(/401|Unauthorized|authoriz/i);
    }
  });
});

describe('McpModule authorization, read by the official client SDK', () => {
  it("leads a client from the 401 to the metadata and the authorization server, as the SDK's discovery does", async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const fixture = await startFixtureApp(
      { forRoot: { authorization: { resource, authorizationServers: ['http://127.0.0.1:1/issuer'] } } },
      port,
    );
    try {
      const res = await fetch(fixture.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const { resourceMetadataUrl } = extractWWWAuthenticateParams(res);
      expect(resourceMetadataUrl?.href).toBe(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`);
      const metadata = await discoverOAuthProtectedResourceMetadata(fixture.url, { resourceMetadataUrl });
      expect(metadata).toMatchObject({ resource, authorization_servers: ['http://127.0.0.1:1/issuer'] });
    } finally {
      await fixture.close();
    }
  });
});

describe('McpModule authorization options', () => {
  const options = (authorization: unknown) => new ResolvedMcpOptions({ policy: { allow: [] }, authorization: authorization as never });

  it.each([
    [{ authorizationServers: ['https://auth.example.com'] }, /authorization\.resource' must be the URL of this MCP endpoint/],
    [
      { resource: 'http://mcp.example.com/mcp', authorizationServers: ['https://a.example'] },
      /must be an https: URL \(http: only for localhost\)/,
    ],
    [{ resource: 'https://mcp.example.com/mcp#x', authorizationServers: ['https://a.example'] }, /must have no fragment/],
    [{ resource: 'https://mcp.example.com/mcp', authorizationServers: [] }, /authorizationServers' must list at least one/],
    [
      { resource: 'https://mcp.example.com/mcp', authorizationServers: ['https://a.example/?tenant=1'] },
      /authorizationServers\[0\]' must have no query/,
    ],
    [
      { resource: 'https://mcp.example.com/mcp', authorizationServers: ['https://a.example'], scopesSupported: ['a b'] },
      /scopesSupported' must be an array of scope names/,
    ],
    [
      { resource: 'https://mcp.example.com/mcp', authorizationServers: ['https://a.example'], audience: 'x' },
      /authorization\.audience' is not an option/,
    ],
  ])('refuses %j at boot, saying what to give', (authorization, message) => {
    expect(() => options(authorization)).toThrow(InvalidMcpOptionsException);
    expect(() => options(authorization)).toThrow(message);
  });

  it('takes a loopback http resource and serves its metadata at the root path for a root resource', () => {
    const root = options({ resource: 'https://MCP.example.com', authorizationServers: ['https://a.example/'] }).authorization!;
    expect(root.resource).toBe('https://mcp.example.com');
    expect(root.metadataPath).toBe('/.well-known/oauth-protected-resource');
    expect(root.document.authorization_servers).toEqual(['https://a.example']);
    expect(
      options({ resource: 'http://localhost:3000/mcp', authorizationServers: ['http://localhost:8080'] }).authorization!.metadataUrl,
    ).toBe('http://localhost:3000/.well-known/oauth-protected-resource/mcp');
  });
});
