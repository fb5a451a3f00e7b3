import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import request from 'supertest';
import { as, plainAppModule } from './__fixtures__/plain-app';

// Red-team probes of the HTTP edge as a plain Nest app serves it: bad input is a clear 4xx, never a 500 or a hang;
// another tenant's run is the same 404 as none, whatever the spelling of its id.
describe('the HTTP edge under an adversarial caller', () => {
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
    await app?.close();
    await db?.drop();
  });

  it.each([
    ['malformed JSON', '{"goal": ', 'application/json'],
    ['a JSON array', '["x"]', 'application/json'],
    ['a JSON string', '"x"', 'application/json'],
    ['null', 'null', 'application/json'],
    ['__proto__ key', '{"goal":"Buy","__proto__":{"tenantId":"globex"}}', 'application/json'],
    ['constructor key', '{"goal":"Buy","constructor":{"prototype":{"tenantId":"globex"}}}', 'application/json'],
    ['a goal that is a number', '{"goal":1e999}', 'application/json'],
    ['a goal that is an object', '{"goal":{"toString":"x"}}', 'application/json'],
    ['a goal that is an array', '{"goal":["Buy"]}', 'application/json'],
    ['a blank goal', '{"goal":" \\n\\t "}', 'application/json'],
    ['a goal with NUL', '{"goal":"Buy\\u0000"}', 'application/json'],
    ['a goal with a lone surrogate', '{"goal":"Buy\\ud800"}', 'application/json'],
    ['no body', '', 'application/json'],
  ])('answers %s with a 4xx on runs and goals, never a 500', async (_, body, type) => {
    for (const path of ['/agents/trader/runs', '/agents/trader/goals']) {
      const res = await http().post(path).set(as('acme')).set('content-type', type).send(body);
      expect([path, res.status >= 400 && res.status < 500, typeof res.body.message]).toEqual([path, true, 'string']);
      expect(JSON.stringify(res.body)).not.toMatch(/stack|at .*\.js|node_modules/);
    }
  });

  // A body a cross-site HTML form can send without a CORS preflight never starts a run (it did: goal=Buy ran the agent).
  it.each([
    ['a form', 'goal=Buy', 'application/x-www-form-urlencoded'],
    ['text/plain JSON', '{"goal":"Buy"}', 'text/plain'],
    ['multipart', '--b\r\nContent-Disposition: form-data; name="goal"\r\n\r\nBuy\r\n--b--\r\n', 'multipart/form-data; boundary=b'],
  ])('refuses %s body 415 on runs and goals: the body must be JSON', async (_, body, type) => {
    for (const path of ['/agents/trader/runs', '/agents/trader/goals']) {
      const res = await http().post(path).set(as('acme')).set('content-type', type).send(body);
      expect([path, res.status, res.body.message]).toEqual([path, 415, expect.stringMatching(/application\/json/)]);
    }
    const json = await http().post('/agents/analyst/runs').set(as('acme')).set('content-type', 'application/json; charset=utf-8');
    expect(json.status).toBe(400); // JSON without a goal: the pipe's answer, as before
  });

  it('keeps a goal over maxGoalLength at 400 on JSON, SSE and goals', async () => {
    const goal = 'x'.repeat(4001);
    for (const [path, accept] of [
      ['/agents/trader/runs', 'application/json'],
      ['/agents/trader/runs', 'text/event-stream'],
      ['/agents/trader/goals', 'application/json'],
    ]) {
      const res = await http().post(path).set(as('acme')).set('accept', accept).send({ goal });
      expect([path, accept, res.status, res.body.field]).toEqual([path, accept, 400, 'goal']);
    }
  });

  it("answers another tenant's run 404 under every spelling of its id", async () => {
    const posted = await http().post('/agents/trader/goals').set(as('acme')).send({ goal: 'What is ACME at?' }).expect(202);
    const id: string = posted.body.runId;
    const spellings = [id, id.toUpperCase(), ` ${id}`, `${id}%20`, `${id}/`, encodeURIComponent(id).replace(/-/g, '%2D'), `${id}%00`];
    for (const s of spellings) {
      const res = await http().get(`/agents/runs/${s}`).set(as('globex'));
      expect([s, res.status]).toEqual([s, 404]);
    }
    for (const s of ['x'.repeat(5000), '%E0%A4%A', '..%2F..%2Fetc', '%uD800', 'not-a-uuid']) {
      const res = await http().get(`/agents/runs/${s}`).set(as('acme'));
      expect([s, res.status >= 400 && res.status < 500]).toEqual([s, true]);
    }
  });

  it('answers a body over the parser limit 413, a streamed request with a bad body as JSON, and a prototype name as agent 404', async () => {
    for (const path of ['/agents/trader/runs', '/agents/trader/goals']) {
      const big = await http()
        .post(path)
        .set(as('acme'))
        .send({ goal: 'x'.repeat(200_000) });
      // Nest's express adapter makes the parser's error an HttpException: its status and message, nothing else.
      expect([path, big.status, big.body.message]).toEqual([path, 413, 'request entity too large']);
    }
    const bad = await http().post('/agents/trader/runs').set(as('acme')).set('accept', 'text/event-stream').send({ goal: '' });
    expect([bad.status, bad.headers['content-type']]).toEqual([400, expect.stringMatching(/^application\/json/)]);
    for (const name of ['__proto__', 'constructor', 'hasOwnProperty', 'toString']) {
      for (const path of [`/agents/${name}/runs`, `/agents/${name}/goals`]) {
        const res = await http().post(path).set(as('acme')).send({ goal: 'Buy' });
        expect([path, res.status, res.body.code]).toEqual([path, 404, 'AgentNotFoundException']);
      }
      const read = await http().get(`/agents/${name}/runs/x`).set(as('acme'));
      expect([name, read.status]).toEqual([name, 404]);
    }
  });
});
