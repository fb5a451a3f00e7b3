import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { AgentRegistry } from '@zmodu/agent';
import { AgentAuditLog } from '@zmodu/guard';
import { ProposalPipeline } from '@zmodu/pipeline';
import request from 'supertest';
import { DataSource, QueryRunnerAlreadyReleasedError } from 'typeorm';
import { AppModule } from '../apps/sample/src/app.module';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { traderAgent, TRADER_BUDGET } from '../apps/sample/src/agents/trader.agent';
import {
  ConfigError,
  DEV_JWT_SECRET,
  jwtSecretFromEnv,
  loggingFromEnv,
  mcpAuthorizationFromEnv,
  optionsFromEnv,
  queueFromEnv,
  workerFromEnv,
  traderBudgetFromEnv,
} from '../apps/sample/src/config';
import { deeperThan } from '../apps/sample/src/edge/body-limits.middleware';
import { isDatabaseUnavailable } from '@zmodu/core';
import { ZmoduExceptionFilter } from '@zmodu/http';
import { SampleAppOptions } from '../apps/sample/src/sample.options';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';

const SECRET = 'edge-test-secret-that-is-long-enough-0123456789';
const now = () => Math.floor(Date.now() / 1000);
/** Signs exactly these claims (an undefined claim is left out; without iat, none is added). */
const sign = (payload: Record<string, unknown>) => {
  const defined = Object.fromEntries(Object.entries(payload).filter(([, v]) => v !== undefined));
  return new JwtService().sign(defined, { secret: SECRET, algorithm: 'HS256', noTimestamp: defined.iat === undefined });
};
const traderBudget = (options: SampleAppOptions) => traderAgent(options.traderBudget).budget;
const claims = (over: Record<string, unknown> = {}) => ({
  tenant: 'acme',
  sub: 'alice',
  permissions: ['agent:read', 'agent:run'],
  iat: now(),
  exp: now() + 600,
  ...over,
});

async function boot(db: TestDatabase, extra: Partial<SampleAppOptions> = {}): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.register({ dataSource: () => db.options(), jwtSecret: SECRET, ...extra })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return app;
}

describe('the HTTP edge of the sample app', () => {
  let db: TestDatabase;
  let app: INestApplication;
  // Every hostile input below must be answered without reaching the filter's unexpected-error (500) path.
  const unexpected = jest.spyOn(
    ZmoduExceptionFilter.prototype as unknown as { unexpected: (err: unknown, requestId?: string) => void },
    'unexpected',
  );
  const http = () => request(app.getHttpServer());
  const bearer = (payload: Record<string, unknown>) => `Bearer ${sign(payload)}`;
  const lead = () => mintToken(SECRET, { tenant: 'acme', user: 'lead', permissions: ['approval:decide', 'desk:lead'] });

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await boot(db);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  afterEach(() => {
    expect(unexpected).not.toHaveBeenCalled();
    unexpected.mockClear();
  });

  describe('claims are checked like input', () => {
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['tenant too long', { tenant: 'a'.repeat(129) }, /"tenant" claim must be 1 to 128/],
      ['tenant with NUL', { tenant: 'ac\u0000me' }, /"tenant" claim holds a NUL or control character/],
      ['tenant with a C1 control', { tenant: 'acme\u0085' }, /"tenant" claim holds a NUL or control character/],
      ['tenant not a string', { tenant: 42 }, /"tenant" claim is a number, not a string/],
      ['tenant with a lone surrogate', { tenant: 'acme\ud800' }, /"tenant" claim holds U\+D800/],
      ["tenant '0' (attack: the wildcard tenant)", { tenant: '0' }, /"tenant" claim '0' is not an id/],
      [
        'tenant reversed on screen (attack: \\u202e)',
        { tenant: '\u202eemca' },
        /"tenant" claim holds U\+202E, a character that shows as nothing/,
      ],
      [
        'tenant unnormalised (attack: e\\u0301quipe looks like équipe)',
        { tenant: 'e\u0301quipe' },
        /"tenant" claim is not in Unicode normalization form C/,
      ],
      ['sub with a zero-width space (attack: lee\\u200b looks like lee)', { sub: 'lee\u200b' }, /"sub" claim holds U\+200B/],
      ['sub with a trailing blank (attack: "lee " looks like lee)', { sub: 'lee ' }, /"sub" claim begins or ends with a blank/],
      ['sub with a bidi isolate (attack: \\u2066)', { sub: 'lee\u2066' }, /"sub" claim holds U\+2066/],
      ['sub too long', { sub: 'u'.repeat(129) }, /"sub" claim must be 1 to 128/],
      ['sub with a newline', { sub: 'alice\nadmin' }, /"sub" claim holds a NUL or control character/],
      ['sub with a lone low surrogate', { sub: '\udc00alice' }, /"sub" claim holds U\+DC00/],
      ['sub missing', { sub: undefined }, /"sub" \(user\) claim is missing/],
      ['a permission with a space', { permissions: ['agent:read', 'agent read'] }, /"permissions" claim/],
      ['a permission with NUL', { permissions: ['agent:read\u0000'] }, /"permissions" claim/],
      ['an empty permission', { permissions: [''] }, /"permissions" claim/],
      ['a permission too long', { permissions: [`a${'b'.repeat(64)}`] }, /"permissions" claim/],
      ['permissions not an array', { permissions: 'agent:read' }, /"permissions" claim/],
      ['too many permissions', { permissions: Array.from({ length: 65 }, (_, i) => `p${i}`) }, /"permissions" claim/],
    ];
    it.each(bad)('answers 401 for %s, naming the claim', async (_name, over, message) => {
      const res = await http()
        .get('/agents')
        .set('Authorization', bearer(claims(over)));
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(message);
    });

    it('accepts 128-character tenant and sub and ordinary permission names', async () => {
      const res = await http()
        .get('/agents')
        .set('Authorization', bearer(claims({ tenant: 't'.repeat(128), sub: 's'.repeat(128), permissions: ['agent:read', 'x.y_z-1'] })));
      expect(res.status).toBe(200);
    });
  });

  describe('token rules', () => {
    it('answers 401 for a token without exp', async () => {
      const res = await http()
        .get('/agents')
        .set('Authorization', bearer(claims({ exp: undefined })));
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(/"exp" claim is missing/);
    });

    it('answers 401 for a lifetime over 24 h (exp - iat, or exp - now without iat), accepts 24 h', async () => {
      const t = now();
      const long = await http()
        .get('/agents')
        .set('Authorization', bearer(claims({ iat: t, exp: t + 24 * 3600 + 1 })));
      expect(long.status).toBe(401);
      expect(long.body.message).toMatch(/"exp" claim is 86401 s after issue; at most 86400/);
      const noIat = await http()
        .get('/agents')
        .set('Authorization', bearer(claims({ iat: undefined, exp: t + 30 * 24 * 3600 })));
      expect(noIat.status).toBe(401);
      expect(noIat.body.message).toMatch(/"exp" claim/);
      const day = await http()
        .get('/agents')
        .set('Authorization', bearer(claims({ iat: t, exp: t + 24 * 3600 })));
      expect(day.status).toBe(200);
    });

    it('answers 401 for an iat in the future beyond 60 s of skew, accepts 30 s', async () => {
      const t = now();
      const future = await http()
        .get('/agents')
        .set('Authorization', bearer(claims({ iat: t + 600, exp: t + 1200 })));
      expect(future.status).toBe(401);
      expect(future.body.message).toMatch(/"iat" claim is in the future/);
      const skewed = await http()
        .get('/agents')
        .set('Authorization', bearer(claims({ iat: t + 30, exp: t + 600 })));
      expect(skewed.status).toBe(200);
    });

    it('answers 401 unless the header is exactly "Bearer <token>"', async () => {
      const token = sign(claims());
      for (const header of [
        `Bearer ${token} junk`,
        `Bearer  ${token}`,
        `bearer ${token}`,
        `Bearer\t${token}`,
        `Token ${token}`,
        'Bearer x junk',
      ]) {
        const res = await http().get('/agents').set('Authorization', header);
        expect(res.status).toBe(401);
        expect(res.body.message).toMatch(/expected exactly "Bearer <token>"/);
      }
      expect((await http().get('/agents').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    });
  });

  describe('fail closed on the secret', () => {
    it('refuses to start without ZMODU_JWT_SECRET, saying to set it or ZMODU_DEV=1, whatever NODE_ENV says', () => {
      for (const env of [
        {},
        { NODE_ENV: 'Production' },
        { NODE_ENV: 'prod' },
        { NODE_ENV: 'development' },
        { ZMODU_DEV: 'true' },
        { ZMODU_JWT_SECRET: '' },
      ])
        expect(() => jwtSecretFromEnv(env)).toThrow(/ZMODU_JWT_SECRET is not set.*ZMODU_DEV=1/);
      expect(() => optionsFromEnv({})).toThrow(ConfigError);
    });

    it('starts with ZMODU_DEV=1 on the development secret', () => {
      const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        expect(jwtSecretFromEnv({ ZMODU_DEV: '1' })).toBe(DEV_JWT_SECRET);
        expect(optionsFromEnv({ ZMODU_DEV: '1' }).jwtSecret).toBe(DEV_JWT_SECRET);
        expect(write).toHaveBeenCalledWith(expect.stringMatching(/development secret/));
      } finally {
        write.mockRestore();
      }
    });

    it('needs 32 non-blank characters in a secret, even with ZMODU_DEV=1', () => {
      expect(() => jwtSecretFromEnv({ ZMODU_JWT_SECRET: 'short' })).toThrow(/at least 32 non-blank/);
      expect(() => jwtSecretFromEnv({ ZMODU_JWT_SECRET: `${' '.repeat(40)}abc`, ZMODU_DEV: '1' })).toThrow(/at least 32 non-blank/);
      expect(jwtSecretFromEnv({ ZMODU_JWT_SECRET: SECRET })).toBe(SECRET);
    });

    it('reads the edge limits from the environment and refuses nonsense', () => {
      const opts = optionsFromEnv({
        ZMODU_JWT_SECRET: SECRET,
        ZMODU_RATE_LIMIT: '7',
        ZMODU_RATE_WINDOW_MS: '1000',
        ZMODU_MAX_TOKEN_LIFETIME_S: '3600',
      });
      expect(opts.edge).toEqual({ rateLimit: 7, rateWindowMs: 1000, maxTokenLifetimeSeconds: 3600 });
      expect(() => optionsFromEnv({ ZMODU_JWT_SECRET: SECRET, ZMODU_RATE_LIMIT: '0' })).toThrow(/ZMODU_RATE_LIMIT/);
    });

    it('reads cluster mode (ZMODU_QUEUE) from the environment; pg-boss needs a PostgreSQL server', () => {
      expect(queueFromEnv({})).toEqual({});
      expect(queueFromEnv({ ZMODU_QUEUE: 'in-process' })).toEqual({});
      expect(queueFromEnv({ ZMODU_QUEUE: 'pg-boss', DATABASE_URL: 'postgres://db/app' })).toEqual({ queue: { driver: 'pg-boss' } });
      expect(() => queueFromEnv({ ZMODU_QUEUE: 'pg-boss' })).toThrow(/needs DATABASE_URL/);
      expect(() => queueFromEnv({ ZMODU_QUEUE: 'redis' })).toThrow(/ZMODU_QUEUE must be 'in-process'/);
      expect(() => optionsFromEnv({ ZMODU_JWT_SECRET: SECRET, ZMODU_QUEUE: 'pg-boss' })).toThrow(ConfigError);
    });

    it('reads the lease of a background run (ZMODU_WORKER_LEASE_MS) and refuses nonsense', () => {
      expect(workerFromEnv({})).toEqual({});
      expect(optionsFromEnv({ ZMODU_JWT_SECRET: SECRET, ZMODU_WORKER_LEASE_MS: '2000' }).worker).toEqual({ leaseMs: 2000 });
      for (const bad of ['99', '2s', '-1', '3600001'])
        expect(() => workerFromEnv({ ZMODU_WORKER_LEASE_MS: bad })).toThrow(/ZMODU_WORKER_LEASE_MS must be a whole number/);
    });

    it('reads MCP authorization of /mcp (ZMODU_MCP_RESOURCE and ZMODU_MCP_AUTHORIZATION_SERVERS), both or neither', () => {
      expect(mcpAuthorizationFromEnv({})).toEqual({});
      expect(
        mcpAuthorizationFromEnv({
          ZMODU_MCP_RESOURCE: 'https://desk.example.com/mcp',
          ZMODU_MCP_AUTHORIZATION_SERVERS: 'https://auth.example.com, https://sso.example.com',
        }),
      ).toEqual({
        mcpAuthorization: {
          resource: 'https://desk.example.com/mcp',
          authorizationServers: ['https://auth.example.com', 'https://sso.example.com'],
        },
      });
      expect(() => mcpAuthorizationFromEnv({ ZMODU_MCP_RESOURCE: 'https://desk.example.com/mcp' })).toThrow(/set both or neither/);
    });

    it('reads the level of the JSON logs (LOG_LEVEL, default info) and refuses an unknown one', () => {
      expect(loggingFromEnv({})).toEqual({ level: 'info' });
      expect(loggingFromEnv({ LOG_LEVEL: 'debug' })).toEqual({ level: 'debug' });
      expect(() => loggingFromEnv({ LOG_LEVEL: 'verbose' })).toThrow(
        /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "verbose"\)/,
      );
    });

    it("reads the trader's fair-use budget from the environment and refuses nonsense", () => {
      expect(traderBudgetFromEnv({})).toEqual({});
      expect(traderBudgetFromEnv({ ZMODU_TRADER_TOKENS_PER_DAY: '50000', ZMODU_TRADER_USER_SHARE: '0.25' })).toEqual({
        tokensPerPeriod: 50_000,
        userShare: 0.25,
      });
      expect(traderBudgetFromEnv({ ZMODU_TRADER_USER_SHARE: '1' })).toEqual({ userShare: 1 });
      for (const share of ['0', '1.5', '-0.2', 'half', '0.2.1', 'NaN'])
        expect(() => traderBudgetFromEnv({ ZMODU_TRADER_USER_SHARE: share })).toThrow(
          /ZMODU_TRADER_USER_SHARE must be a fraction above 0 and at most 1/,
        );
      for (const perDay of ['0', '1e6', '-5', '10.5'])
        expect(() => traderBudgetFromEnv({ ZMODU_TRADER_TOKENS_PER_DAY: perDay })).toThrow(/ZMODU_TRADER_TOKENS_PER_DAY/);
      expect(traderBudget(optionsFromEnv({ ZMODU_JWT_SECRET: SECRET, ZMODU_TRADER_USER_SHARE: '0.5' }))).toEqual({
        ...TRADER_BUDGET,
        userShare: 0.5,
      });
    });
  });

  describe('bodies are checked before they are walked', () => {
    const goal = (body: string) =>
      http().post('/agents/trader/runs').set('Authorization', bearer(claims())).set('content-type', 'application/json').send(body);

    it('answers 413 for the 90 KB body nested 45,000 deep (over the 8 KB limit of a run), before it is parsed', async () => {
      const res = await goal(`{"goal":${'['.repeat(45_000)}${']'.repeat(45_000)}}`);
      // The size check's answer (a parse would have answered the nesting, 400): the body was never walked.
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ field: 'body', limit: 8192 });
    });

    it('answers 400 naming the body for a small body nested deeper than 32 levels', async () => {
      const res = await goal(`{"goal":${'['.repeat(2_000)}${']'.repeat(2_000)}}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ field: 'body', message: expect.stringMatching(/deeper than 32/) });
      const approval = await http()
        .post('/admin/approvals/00000000-0000-0000-0000-000000000000/approve')
        .set('Authorization', `Bearer ${lead()}`)
        .send(JSON.parse(`{"reason":"ok","version":1,"step":0,"payload":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`));
      expect(approval.status).toBe(400);
      expect(approval.body.field).toBe('body');
    });

    it('answers 413 past 8 KB on a run and on an approval decision, and past the parser limit elsewhere', async () => {
      const big = await goal(JSON.stringify({ goal: 'x'.repeat(9000) }));
      expect(big.status).toBe(413);
      const decision = await http()
        .post('/admin/approvals/00000000-0000-0000-0000-000000000000/reject')
        .set('Authorization', `Bearer ${lead()}`)
        .send({ reason: 'r'.repeat(9000), version: 1, step: 0 });
      expect(decision.status).toBe(413);
      const huge = await http()
        .post('/admin/outbox/00000000-0000-0000-0000-000000000000/retry')
        .set('Authorization', bearer(claims({ permissions: ['admin:outbox'] })))
        .set('content-type', 'application/json')
        .send(JSON.stringify({ x: 'y'.repeat(200_000) }));
      expect(huge.status).toBe(413);
      expect(JSON.stringify(huge.body)).not.toMatch(/at \w+ \(/);
    });

    it('answers 413 for a chunked body (no content-length) past the limit of the route', async () => {
      const server = app.getHttpServer();
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: '/agents/trader/runs',
            headers: { authorization: bearer(claims()), 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.write('{"goal":"');
        req.write('x'.repeat(9000));
        req.end('"}');
      });
      expect(status).toBe(413);
    });

    it('answers 400 naming the field for a blank goal, a NUL or a lone surrogate in a goal, and malformed JSON', async () => {
      for (const [body, message] of [
        [JSON.stringify({ goal: '   ' }), /goal must not be blank/],
        [JSON.stringify({ goal: 'buy\u0000 10 ACME' }), /goal must not contain NUL/],
        ['{"goal":"buy \\ud800 ACME"}', /goal must not contain lone surrogates/],
        [JSON.stringify({ goal: 42 }), /goal must be a string/],
      ] as const) {
        const res = await goal(body);
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body.message)).toMatch(message);
      }
      const malformed = await goal('{"goal": "x"');
      expect(malformed.status).toBe(400);
      expect(JSON.stringify(malformed.body)).not.toMatch(/at \w+ \(/);
      // As the filter answers every body-parser 4xx, on Nest 11 and 12 alike (Nest 12 wraps it in a BadRequestException).
      expect(malformed.body).toEqual({ statusCode: 400, message: expect.stringMatching(/JSON/), field: 'body' });
    });

    it('answers 400 naming reason for a blank or NUL approval reason', async () => {
      for (const reason of ['   ', 'ok\u0000', 'ok\ud800']) {
        const res = await http()
          .post('/admin/approvals/00000000-0000-0000-0000-000000000000/approve')
          .set('Authorization', `Bearer ${lead()}`)
          .send({ reason, version: 1, step: 0 });
        expect(res.status).toBe(400);
        expect(res.body.field).toBe('reason');
      }
    });

    it('scans depth iteratively and stops at the limit', () => {
      let deep: unknown = 1;
      for (let i = 0; i < 100_000; i++) deep = [deep];
      expect(deeperThan(deep, 32)).toBe(true);
      expect(deeperThan({ a: [{ b: [1] }] }, 4)).toBe(false);
      expect(deeperThan({ a: [{ b: [1] }] }, 3)).toBe(true);
    });
  });

  describe('headers', () => {
    it('sends helmet headers, Cache-Control: no-store and no X-Powered-By, on answers and errors', async () => {
      for (const res of [
        await http().get('/agents').set('Authorization', bearer(claims())),
        await http().get('/agents'),
        await http().get('/health'),
      ]) {
        expect(res.headers['x-powered-by']).toBeUndefined();
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['content-security-policy']).toBeDefined();
        expect(res.headers['strict-transport-security']).toBeDefined();
      }
    });
  });

  describe('no 500 with a stack', () => {
    it('answers an unexpected error 500 { statusCode, message: "Internal error", requestId }, logged once with the stack', async () => {
      const list = jest.spyOn(app.get(AgentRegistry), 'list').mockImplementationOnce(() => {
        throw new Error('boom at the edge');
      });
      const res = await http().get('/agents').set('Authorization', bearer(claims())).set('x-request-id', 'edge-boom-0001');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ statusCode: 500, message: 'Internal error', requestId: 'edge-boom-0001' });
      expect(unexpected).toHaveBeenCalledTimes(1);
      expect(unexpected.mock.calls[0][0]).toEqual(expect.objectContaining({ message: 'boom at the edge' }));
      list.mockRestore();
      unexpected.mockClear();
    });

    it('maps an unknown agent (a library exception) to 404 through the filter', async () => {
      const res = await http().get('/agents/nobody/policy').set('Authorization', bearer(claims()));
      expect(res.status).toBe(404);
    });

    it('classifies database connection errors', () => {
      for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P03', '08006', '53300'])
        expect(isDatabaseUnavailable({ name: 'QueryFailedError', message: 'x', driverError: { code } })).toBe(true);
      expect(isDatabaseUnavailable(new Error('Waited 5000 ms for the embedded database session (PGlite has one session).'))).toBe(true);
      // A client whose connection the server cut (ListeningPgClient keeps its error; its next query says so).
      expect(isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
      // A transaction whose connection was cut: TypeORM released its query runner, the COMMIT is refused unsent.
      expect(isDatabaseUnavailable(new QueryRunnerAlreadyReleasedError())).toBe(true);
      expect(isDatabaseUnavailable({ message: 'syntax error', code: '42601' })).toBe(false);
      expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    });

    it('answers 503 with Retry-After: 5 when a repository call fails with a connection error', async () => {
      const pipeline = app.get(ProposalPipeline);
      const list = jest.spyOn(pipeline, 'list').mockRejectedValueOnce(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
          name: 'QueryFailedError',
          driverError: { code: 'ECONNREFUSED' },
        }),
      );
      const res = await http().get('/admin/approvals').set('Authorization', `Bearer ${lead()}`);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body.message).toMatch(/database is unavailable/);
      list.mockRestore();
    });

    // Last: it destroys the app's DataSource.
    it('answers 503 with Retry-After: 5 once the database is gone', async () => {
      await app.get<DataSource>(getDataSourceToken()).destroy();
      const res = await http().get('/admin/approvals').set('Authorization', `Bearer ${lead()}`);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toMatchObject({ statusCode: 503, message: expect.stringMatching(/database is unavailable/) });
    });
  });
});

describe('the rate limit per caller', () => {
  let db: TestDatabase;
  let app: INestApplication;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await boot(db, { seed: false, edge: { rateLimit: 3, rateWindowMs: 60_000 } });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers 429 with Retry-After past the limit, keyed on tenant and subject, not the IP', async () => {
    const alice = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice' })}`;
    for (let i = 0; i < 3; i++) expect((await request(app.getHttpServer()).get('/agents').set('Authorization', alice)).status).toBe(200);
    const limited = await request(app.getHttpServer()).get('/agents').set('Authorization', alice);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body.message).toMatch(/Too many requests/);
    // Same IP, another subject; same subject, another tenant: budgets of their own.
    const bob = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'bob' })}`;
    expect((await request(app.getHttpServer()).get('/agents').set('Authorization', bob)).status).toBe(200);
    const globexAlice = `Bearer ${mintToken(SECRET, { tenant: 'globex', user: 'alice' })}`;
    expect((await request(app.getHttpServer()).get('/agents').set('Authorization', globexAlice)).status).toBe(200);
  });
});

describe('fair use and a poisoned audit batch, over HTTP', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let dataSource: DataSource;
  const token = (user: string, tenant = 'acme') =>
    `Bearer ${mintToken(SECRET, { tenant, user, permissions: ['agent:read', 'agent:run'] })}`;
  const run = (agent: string, user: string, goal: string, tenant = 'acme') =>
    request(app.getHttpServer()).post(`/agents/${agent}/runs`).set('Authorization', token(user, tenant)).send({ goal });

  beforeAll(async () => {
    db = await createTestDatabase();
    // A small day for the trader so the test spends it quickly: 40,000 tokens per tenant, a quarter per user.
    app = await boot(db, { edge: { rateLimit: 10_000 }, traderBudget: { tokensPerPeriod: 40_000, userShare: 0.25 } });
    dataSource = app.get<DataSource>(getDataSourceToken());
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('stops a greedy user at their share of the tenant budget while another user of the tenant still runs', async () => {
    const long = `buy 10 ACME ${'and tell me everything about it '.repeat(125)}`.slice(0, 4000);
    const greedy: Array<{ stoppedReason: string; budget?: string }> = [];
    for (let i = 0; i < 20; i++) {
      const res = await run('trader', 'mallory', long);
      expect(res.status).toBe(200);
      greedy.push(res.body);
      if (res.body.stoppedReason === 'budget_exhausted') break;
    }
    const last = greedy[greedy.length - 1];
    expect(last).toMatchObject({ stoppedReason: 'budget_exhausted', budget: 'user' });
    expect(greedy.length).toBeGreaterThan(1); // the share allowed some runs first
    // Once out of her share, every further run stops at once, saying which budget ran out.
    expect((await run('trader', 'mallory', 'buy 1 ACME')).body).toMatchObject({ stoppedReason: 'budget_exhausted', budget: 'user' });
    // Another user of acme, and the same user name in another tenant, still run to the end.
    const bob = await run('trader', 'bob', 'buy 10 ACME');
    expect(bob.status).toBe(200);
    expect(bob.body.stoppedReason).toBe('final');
    expect((await run('trader', 'mallory', 'buy 10 ACME', 'globex')).body.stoppedReason).toBe('final');
    // What mallory spent is charged to her and to the tenant: at most her share (10,000) plus the one run that crossed it.
    const [users, tenant] = await Promise.all([
      dataSource.query(
        `SELECT user_id, sum(tokens)::int AS tokens FROM zmodu_token_usage_users WHERE tenant_id = 'acme' AND agent = 'trader' GROUP BY user_id ORDER BY user_id`,
      ),
      dataSource.query(`SELECT sum(tokens)::int AS tokens FROM zmodu_token_usage WHERE tenant_id = 'acme' AND agent = 'trader'`),
    ]);
    const spent = Object.fromEntries(users.map((u: { user_id: string; tokens: number }) => [u.user_id, u.tokens]));
    expect(spent.mallory).toBeGreaterThanOrEqual(10_000);
    expect(spent.mallory).toBeLessThan(10_000 + 20_000);
    expect(tenant[0].tokens).toBe(spent.mallory + spent.bob);
  });

  it('writes every other audit entry when the database refuses one among a hundred, and keeps writing', async () => {
    // A real refusal by the database: a check constraint on the audit table refuses mallory's db.query entry.
    await dataSource.query(
      `ALTER TABLE zmodu_audit_log ADD CONSTRAINT e2e_poison CHECK (user_id IS DISTINCT FROM 'poisoner' OR skill <> 'db.query')`,
    );
    try {
      const users = Array.from({ length: 50 }, (_, i) => (i === 23 ? 'poisoner' : `analyst-${i}`));
      // 50 analyst runs at once, two tool calls each (market.quote, db.query): 100 audit entries, one refused.
      const answers = await Promise.all(users.map((user) => run('analyst', user, 'how is the desk doing?')));
      for (const res of answers) expect(res.body.stoppedReason).toBe('final');
      const runIds = answers.map((res) => res.body.runId as string);
      const later = await run('analyst', 'analyst-later', 'and now?');
      await app.get(AgentAuditLog).flush();
      const rows: Array<{ run_id: string; user_id: string; skill: string }> = await dataSource.query(
        `SELECT run_id, user_id, skill FROM zmodu_audit_log WHERE run_id = ANY($1) ORDER BY user_id, skill`,
        [[...runIds, later.body.runId]],
      );
      expect(rows).toHaveLength(101);
      expect(rows.filter((r) => r.user_id === 'poisoner').map((r) => r.skill)).toEqual(['market.quote']);
      const letters: Array<{ entry: string; error: string }> = await dataSource.query(`SELECT entry, error FROM zmodu_audit_dead_letters`);
      expect(letters).toHaveLength(1);
      expect(JSON.parse(letters[0].entry)).toMatchObject({ userId: 'poisoner', skill: 'db.query', runId: runIds[23] });
      expect(letters[0].error).toMatch(/e2e_poison/);
      expect(app.get(AgentAuditLog).metrics()).toMatchObject({ deadLettered: 1, dropped: 0, pending: 0 });
    } finally {
      await dataSource.query(`ALTER TABLE zmodu_audit_log DROP CONSTRAINT e2e_poison`);
    }
  });

  it('answers 401 for a token whose sub carries NUL, before anything is audited', async () => {
    const before = await dataSource.query(`SELECT count(*)::int AS n FROM zmodu_audit_log`);
    const res = await request(app.getHttpServer())
      .post('/agents/analyst/runs')
      .set('Authorization', `Bearer ${sign(claims({ sub: 'eve\u0000root' }))}`)
      .send({ goal: 'how is the desk doing?' });
    expect(res.status).toBe(401);
    await app.get(AgentAuditLog).flush();
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM zmodu_audit_log`)).toEqual(before);
  });
});
