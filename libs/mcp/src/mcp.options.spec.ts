import { createMcpController } from './mcp.controller';
import { ResolvedMcpOptions } from './mcp.options';

describe('McpModule options', () => {
  it('applies the defaults once and reads the principal from req.user by default', async () => {
    const options = new ResolvedMcpOptions({ policy: { allow: ['a.b'] } });
    expect(options).toMatchObject({
      maxSessions: 1000,
      sessionIdleMs: 900_000,
      maxBodyBytes: 1_048_576,
      agent: 'mcp',
      rateLimit: { limit: 600, windowMs: 60_000 },
    });
    expect([...options.allowedOrigins]).toEqual([]);
    expect(options.allowedHosts).toBeUndefined();
    const req = { user: { tenantId: 't', userId: 'u', permissions: ['p'] } } as never;
    expect(await options.principal(req)).toEqual({ tenantId: 't', userId: 'u', permissions: ['p'] });
    // Half a caller is no caller.
    expect(await options.principal({ user: { tenantId: 't' } } as never)).toBeNull();
    expect(await options.principal({ user: { tenantId: 't', userId: 'u', permissions: 'p' } } as never)).toBeNull();
    // Inherited keys do not count.
    expect(await options.principal({ user: Object.create({ tenantId: 't', userId: 'u' }) } as never)).toBeNull();
    // An id that is no id (scopeIdProblem) is no caller, and the 401 says why.
    expect(await options.caller({ user: { tenantId: 't', userId: 'lee\u200b', permissions: [] } } as never)).toEqual({
      principal: null,
      problem: expect.stringMatching(/^the caller's userId holds U\+200B/),
    });
    expect(await options.caller({} as never)).toEqual({ principal: null, problem: 'no authenticated caller' });
  });

  it('takes a resolver, which may be async', async () => {
    const options = new ResolvedMcpOptions({
      policy: { allow: [] },
      principal: async (req) => ({ tenantId: String(req.headers['x-t']), userId: 'svc', permissions: [] }),
    });
    expect(await options.principal({ headers: { 'x-t': 'acme' } } as never)).toEqual({ tenantId: 'acme', userId: 'svc', permissions: [] });
  });

  it('refuses bad options with what to fix', () => {
    expect(() => new ResolvedMcpOptions({} as never)).toThrow(/'policy' is required/);
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, maxSessions: 0 })).toThrow(/'maxSessions' must be a positive integer/);
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, sessionIdleMs: 1.5 })).toThrow(/sessionIdleMs/);
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, principal: 'req.user' as never })).toThrow(
      /'principal' must be a function/,
    );
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, agent: '' })).toThrow(/'agent'/);
    // The policy is checked like an agent's, at boot.
    expect(() => new ResolvedMcpOptions({ policy: { allow: ['a.b', ''] } })).toThrow(/'policy'.*non-empty string/);
    expect(() => new ResolvedMcpOptions({ policy: { allow: ['a.b'], allowExecute: 'yes' as never } })).toThrow(/allowExecute/);
    expect(() => new ResolvedMcpOptions({ policy: { allow: ['a.b'], budget: -1 } })).toThrow(/budget/);
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, rateLimit: { limit: 0, windowMs: 1000 } })).toThrow(
      /'rateLimit' limit must be a whole number of calls of at least 1 \(got 0\)/,
    );
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, rateLimit: { limit: 5 } as never })).toThrow(/'rateLimit' windowMs/);
    expect(new ResolvedMcpOptions({ policy: { allow: [] }, rateLimit: false }).rateLimit).toBe(false);
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, allowedOrigins: ['https://app.example.com/login'] })).toThrow(
      /'allowedOrigins\[0\]' must be scheme:\/\/host\[:port\] only/,
    );
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, allowedOrigins: 'https://a.example' as never })).toThrow(
      /'allowedOrigins' must be an array/,
    );
    expect(() => new ResolvedMcpOptions({ policy: { allow: [] }, allowedHosts: ['https://api.example.com'] })).toThrow(
      /'allowedHosts\[0\]' must be a host name, optionally with a port/,
    );
    expect(new ResolvedMcpOptions({ policy: { allow: [] }, allowedOrigins: ['HTTPS://App.Example.com:443'] }).allowedOrigins).toEqual(
      new Set(['https://app.example.com']),
    );
    expect(new ResolvedMcpOptions({ policy: { allow: [] }, allowedHosts: ['API.example.com:8443', '[::1]'] }).allowedHosts).toEqual([
      { hostname: 'api.example.com', port: '8443' },
      { hostname: '[::1]' },
    ]);
    expect(() => createMcpController('/mcp/:id')).toThrow(/'path' must be a plain route/);
    expect(() => createMcpController('')).toThrow(/'path'/);
    expect(createMcpController('/api/mcp')).toEqual(expect.any(Function));
  });
});
