import { AgentAuditLog } from '@zmodu/guard';
import { OptionalPeerUnavailableException } from '@zmodu/guard';
import { simulateMissingPeers } from '@zmodu/guard/testing';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { docsFromEnv } from '../apps/sample/src/config';
import { servedRoutes } from '../libs/admin/src/__fixtures__/express-routes';
import { validateOpenApi } from '../libs/admin/src/__fixtures__/validate-openapi';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

describe('the sample serves the OpenAPI document of its HTTP API, and the admin API', () => {
  const { boot } = sampleAppsOnTestDatabase(SECRET);
  const bearer = (tenant: string, permissions: string[]) => `Bearer ${mintToken(SECRET, { tenant, user: 'ada', permissions })}`;

  it('answers GET /docs-json without a token: a valid OpenAPI document with every admin route and the bearer scheme', async () => {
    const app = await boot();
    const res = await request(app.getHttpServer()).get('/docs-json').expect(200).expect('content-type', /json/);
    const document = res.body as { paths: Record<string, Record<string, { security?: unknown; tags?: string[] }>>; components: unknown };
    expect(await validateOpenApi(document)).toEqual({ valid: true });
    expect(document.components).toMatchObject({ securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } });

    const admin = servedRoutes(app, '/admin');
    expect(admin).toEqual(
      expect.arrayContaining([
        'get /admin/agents',
        'get /admin/approvals',
        'get /admin/audit',
        'get /admin/audit/verify',
        'get /admin/outbox',
        'get /admin/quota',
        'get /admin/skills',
        'get /admin/skills/openapi.json',
        'post /admin/approvals/{id}/approve',
      ]),
    );
    // The approvals console's own files and settings are public (its data comes from the admin API, with a token).
    const consolePublic = ['get /admin/console', 'get /admin/console/config.json', 'get /admin/console/assets/{file}'];
    expect(admin).toEqual(expect.arrayContaining([...consolePublic, 'get /admin/console/session']));
    for (const route of [...admin, ...servedRoutes(app, '/agents'), ...servedRoutes(app, '/jobs'), ...servedRoutes(app, '/memory')]) {
      const [method, path] = route.split(' ');
      expect([route, document.paths[path]?.[method] !== undefined]).toEqual([route, true]);
      expect([route, document.paths[path][method].security]).toEqual([route, consolePublic.includes(route) ? undefined : [{ bearer: [] }]]);
    }
    expect(document.paths['/health'].get.tags).toEqual(['health']);
    expect(document.paths['/health'].get.security).toBeUndefined();
    await request(app.getHttpServer()).get('/docs').expect(200).expect('content-type', /html/);
  });

  /** The security headers every answer of the sample carries (helmet's, no-store, no X-Powered-By). */
  const edgeHeaders = (res: request.Response) => ({
    poweredBy: res.headers['x-powered-by'],
    frame: res.headers['x-frame-options'],
    csp: res.headers['content-security-policy'],
    hsts: res.headers['strict-transport-security'],
    nosniff: res.headers['x-content-type-options'],
    cache: res.headers['cache-control'],
  });

  it("answers /docs, its assets, /docs-json and the JSON parser's refusals with the headers of every answer (attack: framing the Swagger UI, X-Powered-By back)", async () => {
    const app = await boot({ seed: false });
    const http = () => request(app.getHttpServer());
    const bearer = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'ada' })}`;
    const expected = edgeHeaders(await http().get('/health').expect(200));
    expect(expected).toMatchObject({ poweredBy: undefined, frame: 'SAMEORIGIN', cache: 'no-store', nosniff: 'nosniff' });
    expect(expected.csp).toContain("frame-ancestors 'self'");
    const answers: Array<[string, request.Test, number]> = [
      ['the Swagger UI', http().get('/docs'), 200],
      ['its init script', http().get('/docs/swagger-ui-init.js'), 200],
      ['the document', http().get('/docs-json'), 200],
      ['a body that is not JSON', http().post('/agents/trader/runs').set('Authorization', bearer).type('json').send('{"goal":'), 400],
      [
        'a body over the parser limit',
        http()
          .post('/agents/trader/runs')
          .set('Authorization', bearer)
          .type('json')
          .send(JSON.stringify({ goal: 'x'.repeat(200_000) })),
        413,
      ],
      ['an unknown route', http().get('/nowhere'), 404],
    ];
    for (const [what, pending, status] of answers) {
      const res = await pending;
      expect([what, res.status, edgeHeaders(res)]).toEqual([what, status, expected]);
    }
  });

  it('serves no /docs unless asked outside development: ZMODU_DOCS=1 or 0, else only with ZMODU_DEV=1', async () => {
    expect(docsFromEnv({})).toBe(false);
    expect(docsFromEnv({ NODE_ENV: 'development' })).toBe(false);
    expect(docsFromEnv({ ZMODU_DEV: '1' })).toBe(true);
    expect(docsFromEnv({ ZMODU_DOCS: '1' })).toBe(true);
    expect(docsFromEnv({ ZMODU_DOCS: '0', ZMODU_DEV: '1' })).toBe(false);
    expect(() => docsFromEnv({ ZMODU_DOCS: 'yes' })).toThrow(/ZMODU_DOCS must be 1 \(serve \/docs\) or 0/);
    const app = await boot({ seed: false }, [], { docs: false });
    for (const path of ['/docs', '/docs-json', '/docs/swagger-ui-init.js']) {
      const res = await request(app.getHttpServer()).get(path);
      expect([path, res.status, res.headers['x-powered-by'], res.headers['cache-control']]).toEqual([path, 404, undefined, 'no-store']);
    }
  });

  it('asked for /docs without @nestjs/swagger (an optional peer), the boot fails naming the package to install', async () => {
    const restore = simulateMissingPeers('@nestjs/swagger');
    let thrown: unknown;
    try {
      await boot({ seed: false }, [], { docs: true });
    } catch (err) {
      thrown = err;
    } finally {
      restore();
    }
    expect(thrown).toBeInstanceOf(OptionalPeerUnavailableException);
    expect((thrown as Error).message).toBe(
      'the OpenAPI document and Swagger UI (ZMODU_DOCS=1, ZMODU_DEV=1) needs the @nestjs/swagger package: npm install @nestjs/swagger@^12 (with Nest 11: @nestjs/swagger@^11.4.7)',
    );
    // Not asked for, it boots without it.
    const restoreAgain = simulateMissingPeers('@nestjs/swagger');
    try {
      const app = await boot({ seed: false }, [], { docs: false });
      await request(app.getHttpServer()).get('/health').expect(200);
    } finally {
      restoreAgain();
    }
  });

  it("serves the admin API to the sample's tokens: agents, its tenant's quota and the skills its permissions open", async () => {
    const app = await boot();
    const http = () => request(app.getHttpServer());
    await http().get('/admin/agents').expect(401);
    await http()
      .get('/admin/agents')
      .set('Authorization', bearer('acme', ['admin:quota']))
      .expect(403);
    const agents = await http()
      .get('/admin/agents')
      .set('Authorization', bearer('acme', ['admin:agents']))
      .expect(200);
    expect(agents.body.agents.map((a: { name: string }) => a.name)).toEqual(['admin', 'analyst', 'desk', 'ops', 'scheduler', 'trader']);
    expect(agents.body.worker).toMatchObject({ succeeded: 0, failed: 0 });

    const run = await http()
      .post('/agents/trader/runs')
      .set('Authorization', bearer('globex', ['agent:run', 'market:read', 'order:draft']))
      .send({ goal: 'Buy 10 ACME' })
      .expect(200);
    expect(run.body.metrics.tokensIn).toBeGreaterThan(0);
    const globex = await http()
      .get('/admin/quota')
      .set('Authorization', bearer('globex', ['admin:quota']))
      .expect(200);
    // The model's tokens and the tool calls' costs, charged to the tenant and to the user.
    const [row] = globex.body.items;
    expect(globex.body.items).toEqual([
      {
        agent: 'trader',
        period: globex.body.currentPeriod,
        tokens: row.tokens,
        limit: 1_000_000,
        remaining: 1_000_000 - row.tokens,
        userLimit: 200_000,
        users: [{ userId: 'ada', tokens: row.tokens }],
      },
    ]);
    expect(row.tokens).toBeGreaterThanOrEqual(run.body.metrics.tokensIn + run.body.metrics.tokensOut);
    expect(
      (
        await http()
          .get('/admin/quota')
          .set('Authorization', bearer('acme', ['admin:quota']))
          .expect(200)
      ).body.items,
    ).toEqual([]);
    await http()
      .get('/admin/quota?tenant=globex')
      .set('Authorization', bearer('acme', ['admin:quota']))
      .expect(403);
    // The run's tool calls are in globex's audit (once the batch is written), under the run id, and not in acme's.
    await app.get(AgentAuditLog).flush();
    const audit = await http()
      .get(`/admin/audit?run=${encodeURIComponent(run.body.runId)}`)
      .set('Authorization', bearer('globex', ['admin:audit']))
      .expect(200);
    expect(audit.body.entries.length).toBeGreaterThan(0);
    expect(audit.body.entries.every((e: { tenantId: string; agent: string }) => e.tenantId === 'globex' && e.agent === 'trader')).toBe(
      true,
    );
    const acmeAudit = await http()
      .get(`/admin/audit?run=${encodeURIComponent(run.body.runId)}`)
      .set('Authorization', bearer('acme', ['admin:audit']))
      .expect(200);
    expect(acmeAudit.body).toEqual({ entries: [], nextCursor: null });
    const after = await http()
      .get('/admin/agents')
      .set('Authorization', bearer('acme', ['admin:agents']))
      .expect(200);
    const trader = after.body.agents.find((a: { name: string }) => a.name === 'trader');
    expect(trader.counters.runs.runs).toBe(1);
    expect(trader.counters.guard.allowed).toBeGreaterThan(0);

    const skills = (permissions: string[]) =>
      http()
        .get('/admin/skills')
        .set('Authorization', bearer('acme', ['admin:skills', ...permissions]))
        .expect(200)
        .then((res) => (res.body as Array<{ name: string }>).map((s) => s.name));
    const bare = await skills([]);
    const reader = await skills(['market:read']);
    expect(bare).not.toContain('market.quote');
    expect(reader).toContain('market.quote');
    expect(reader.length).toBeGreaterThan(bare.length);
  });
});
