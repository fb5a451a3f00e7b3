import { INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AgentModule } from '@zmodu/agent';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AgentAuditLog, Redactor } from '@zmodu/guard';
import request from 'supertest';
import type { Response } from 'superagent';
import { DataSource } from 'typeorm';
import { agents, AppController, as, plainAppModule, QuoteSkills } from './__fixtures__/plain-app';
import { ZmoduExceptionFilter, ZmoduHttpModule } from './index';

/** Polls `condition` every 50 ms for at most `ms`. */
async function until(condition: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await condition()); await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() > end) throw new Error('the condition did not hold in time');
}

/** The events of a Server-Sent Events body. */
function events(text: string): Array<{ event: string; data: unknown }> {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [event, data] = block.split('\n');
      return { event: event.slice('event: '.length), data: JSON.parse(data.slice('data: '.length)) };
    });
}

/** superagent's parser of a text/event-stream body: the whole text. */
const sseBody = (res: Response, done: (err: Error | null, body: unknown) => void) => {
  let text = '';
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => (text += chunk));
  stream.on('end', () => done(null, text));
};

describe('a plain Nest application with only the packages: ZmoduHttpModule at its HTTP edge', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({ imports: [plainAppModule(() => db.options())] }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers no caller 401, a caller without a tenant 403, one without the run permission 403, each saying why', async () => {
    for (const path of ['/agents/trader/runs', '/agents/trader/goals']) {
      const none = await http().post(path).send({ goal: 'x' });
      expect([path, none.status, none.body.message]).toEqual([path, 401, expect.stringMatching(/^No authenticated caller/)]);
      const noTenant = await http().post(path).set(as(undefined)).send({ goal: 'x' });
      expect([path, noTenant.status, noTenant.body.message]).toEqual([
        path,
        403,
        expect.stringMatching(/no usable tenant \(tenantId is missing\)/),
      ]);
      const blank = await http().post(path).set(as(' ')).send({ goal: 'x' });
      expect([path, blank.status, blank.body.message]).toEqual([path, 403, expect.stringMatching(/tenantId is empty/)]);
      const reader = await http()
        .post(path)
        .set(as('acme', 'alice', 'agent:read'))
        .send({ goal: 'x' });
      expect([path, reader.status, reader.body.message]).toEqual([path, 403, expect.stringMatching(/Missing permission: agent:run/)]);
    }
    expect((await http().get('/agents/runs/r1')).status).toBe(401);
    expect((await http().get('/me')).status).toBe(401);
    // The contract on the application's own route: the caller and the request's run id.
    const me = await http()
      .get('/me')
      .set(as('acme', 'alice', 'agent:run,x:y'))
      .expect(200);
    expect(me.body).toEqual({ tenantId: 'acme', userId: 'alice', permissions: ['agent:run', 'x:y'], runId: expect.any(String) });
  });

  it('answers an unknown agent 404 and a bad goal 400 (they were 500s), naming what is wrong', async () => {
    const unknown = await http().post('/agents/nobody/runs').set(as('acme')).send({ goal: 'What is ACME at?' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, code: 'AgentNotFoundException', agent: 'nobody' });
    expect(unknown.body.message).toMatch(/No agent named 'nobody'/);
    for (const [body, message] of [
      [{ goal: '' }, /goal must not be blank/],
      [{ goal: '   ' }, /goal must not be blank/],
      [{}, /goal is missing/],
      [{ goal: 42 }, /goal must be a string/],
      [{ goal: 'x'.repeat(4001) }, /goal must be shorter than or equal to 4000 characters/],
      [{ goal: 'buy\u0000' }, /goal must not contain NUL/],
      [['goal'], /must be a JSON object/],
    ] as const) {
      const res = await http().post('/agents/trader/runs').set(as('acme')).send(body);
      expect([JSON.stringify(body).slice(0, 40), res.status, res.body.message]).toEqual([
        JSON.stringify(body).slice(0, 40),
        400,
        expect.stringMatching(message),
      ]);
    }
    // The same from the application's own code: Agent.run's exceptions, mapped by the filter.
    expect((await http().post('/direct').send({ agent: 'nobody', goal: 'x' })).status).toBe(404);
    const empty = await http().post('/direct').send({ agent: 'trader', goal: '' });
    expect([empty.status, empty.body.code]).toEqual([400, 'InvalidGoalException']);
  });

  it('never takes the tenant, the user or the permissions from the body (attack: { tenantId: "globex" })', async () => {
    for (const field of ['tenantId', 'userId', 'permissions']) {
      const res = await http()
        .post('/agents/trader/runs')
        .set(as('acme'))
        .send({ goal: 'What is ACME at?', [field]: field === 'permissions' ? ['admin'] : 'globex' });
      expect([field, res.status, res.body.message]).toEqual([field, 400, expect.stringMatching(/is the authenticated caller's|caller's/)]);
    }
  });

  it("runs an agent as the caller over JSON: the skill and the audit see the caller's tenant and user", async () => {
    const quotes = app.get(QuoteSkills);
    quotes.calls.length = 0;
    const res = await http().post('/agents/trader/runs').set(as('acme', 'alice')).send({ goal: 'What is ACME at?' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ agent: 'trader', answer: 'ACME is at 101.5.', stoppedReason: 'final' });
    expect(res.body.steps[0].toolCalls.map((c: { name: string; decision: string }) => [c.name, c.decision])).toEqual([
      ['market.quote', 'allowed'],
    ]);
    expect(quotes.calls).toEqual([{ tenantId: 'acme', userId: 'alice' }]);
    const audit = app.get(AgentAuditLog);
    await audit.flush();
    const entries = await audit.query({ runId: res.body.runId });
    expect(entries.map((e) => [e.skill, e.tenantId, e.userId, e.decision])).toEqual([['market.quote', 'acme', 'alice', 'allowed']]);
  });

  it('runs the same over Server-Sent Events with Accept: text/event-stream: step, delta, final', async () => {
    const res = await http()
      .post('/agents/trader/runs')
      .set(as('acme'))
      .set('Accept', 'text/event-stream')
      .send({ goal: 'What is ACME at?' })
      .buffer(true)
      .parse(sseBody);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['cache-control']).toBe('no-cache, no-store');
    const stream = events(res.body as string);
    expect(new Set(stream.map((e) => e.event))).toEqual(new Set(['delta', 'step', 'final']));
    expect(stream.at(-1)).toEqual({
      event: 'final',
      data: expect.objectContaining({ answer: 'ACME is at 101.5.', stoppedReason: 'final' }),
    });
    const step = stream.find((e) => e.event === 'step')!.data as { toolCall: { name: string; decision: string } };
    expect([step.toolCall.name, step.toolCall.decision]).toEqual(['market.quote', 'allowed']);
    // An error before the stream opens is a plain JSON answer.
    const unknown = await http().post('/agents/nobody/runs').set(as('acme')).set('Accept', 'text/event-stream').send({ goal: 'x' });
    expect([unknown.status, unknown.headers['content-type']]).toEqual([404, expect.stringMatching(/^application\/json/)]);
  });

  it("runs a goal in the background and shows it to its tenant only: another tenant's run, or another agent's, is 404", async () => {
    const posted = await http().post('/agents/trader/goals').set(as('acme')).send({ goal: 'What is ACME at?' }).expect(202);
    const { runId } = posted.body as { runId: string };
    const read = () => http().get(`/agents/trader/runs/${runId}`).set(as('acme'));
    await until(async () => (await read()).body.status === 'succeeded');
    const run = (await read().expect(200)).body;
    expect(run).toMatchObject({ id: runId, agent: 'trader', status: 'succeeded', answer: 'ACME is at 101.5.', userId: 'alice' });
    for (const hidden of ['tenantId', 'permissions', 'leaseOwner', 'leaseUntil']) expect([hidden, hidden in run]).toEqual([hidden, false]);
    expect((await http().get(`/agents/runs/${runId}`).set(as('acme'))).body.id).toBe(runId);
    for (const [what, path, caller] of [
      ['another tenant', `/agents/trader/runs/${runId}`, as('globex')],
      ['another tenant, any agent', `/agents/runs/${runId}`, as('globex')],
      ['another agent', `/agents/analyst/runs/${runId}`, as('acme')],
      ['no such run', '/agents/runs/no-such-run', as('acme')],
    ] as const) {
      const res = await http().get(path).set(caller);
      expect([what, res.status, res.body.message]).toEqual([what, 404, expect.stringMatching(/^No run '.*' in your tenant\.$/)]);
    }
    expect((await http().get(`/agents/nobody/runs/${runId}`).set(as('acme'))).status).toBe(404);
  });
});

describe('the plain application without AgentWorkerModule', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({ imports: [plainAppModule(() => db.options(), { worker: false })] }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('runs an agent while the caller waits, and answers the background routes 501, saying what to import', async () => {
    const ran = await http().post('/agents/trader/runs').set(as('acme')).send({ goal: 'What is ACME at?' }).expect(200);
    expect(ran.body).toMatchObject({ answer: 'ACME is at 101.5.' });
    for (const [method, path] of [
      ['post', '/agents/trader/goals'],
      ['get', '/agents/runs/r1'],
      ['get', '/agents/trader/runs/r1'],
    ] as const) {
      const res = await http()[method](path).set(as('acme')).send({ goal: 'later' });
      expect([path, res.status, res.body.message]).toEqual([path, 501, expect.stringMatching(/imports no AgentWorkerModule/)]);
    }
  });
});

describe('the plain application when its database stops', () => {
  let db: TestDatabase;
  let app: INestApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase();
    const moduleRef = await Test.createTestingModule({ imports: [plainAppModule(() => db.options())] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    // The database never comes back here (test/http-edge.pg-spec.ts stops and restarts a server): what the app could
    // not write at shutdown is its log's, not this test's.
    await app?.close().catch(() => undefined);
    await db?.drop();
  });

  it('answers 503 with Retry-After while the database cannot be reached, never a bare 500', async () => {
    const posted = await http().post('/agents/trader/goals').set(as('acme')).send({ goal: 'What is ACME at?' }).expect(202);
    await app.get(DataSource).destroy();
    const read = await http().get(`/agents/runs/${posted.body.runId}`).set(as('acme'));
    expect([read.status, read.headers['retry-after'], read.body.message]).toEqual([
      503,
      '5',
      'The database is unavailable: retry in 5 seconds.',
    ]);
    const run = await http().post('/agents/trader/runs').set(as('acme')).send({ goal: 'What is ACME at?' });
    expect([run.status, run.headers['retry-after'], run.body.message]).toEqual([503, '5', expect.stringMatching(/retry in 5 seconds/)]);
    const goal = await http().post('/agents/trader/goals').set(as('acme')).send({ goal: 'What is ACME at?' });
    expect([goal.status, goal.headers['retry-after']]).toEqual([503, '5']);
  });
});

describe('ZmoduHttpModule without its extras: no route, no filter', () => {
  let app: INestApplication;

  @Module({
    imports: [AgentModule.forRoot({ agents: agents(), guard: { auditStore: 'memory', quotaStore: 'memory' } }), ZmoduHttpModule.forRoot()],
    controllers: [AppController],
    providers: [QuoteSkills],
  })
  class BareModule {}

  afterEach(async () => {
    await app?.close();
  });

  it('serves no runs route, and leaves errors to Nest; app.useGlobalFilters(new ZmoduExceptionFilter(...)) maps them', async () => {
    app = (await Test.createTestingModule({ imports: [BareModule] }).compile()).createNestApplication({ logger: false });
    await app.init();
    expect((await request(app.getHttpServer()).post('/agents/trader/runs').send({ goal: 'x' })).status).toBe(404);
    expect((await request(app.getHttpServer()).post('/direct').send({ agent: 'nobody', goal: 'x' })).status).toBe(500);
    await app.close();

    app = (await Test.createTestingModule({ imports: [BareModule] }).compile()).createNestApplication({ logger: false });
    app.useGlobalFilters(new ZmoduExceptionFilter(app.get(Redactor)));
    await app.init();
    const unknown = await request(app.getHttpServer()).post('/direct').send({ agent: 'nobody', goal: 'x' });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'AgentNotFoundException']);
    expect((await request(app.getHttpServer()).post('/direct').send({ agent: 'trader', goal: ' ' })).status).toBe(400);
  });
});
