import { request as httpRequest } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AgentAuditLog, TokenQuota } from '@zmodu/guard';
import request from 'supertest';
import { AppModule } from '../apps/sample/src/app.module';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { optionsFromEnv } from '../apps/sample/src/config';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { conversation, FakeTurn, openAIProtocolServer, OpenAIProtocolServer } from './support/openai-protocol-server';
import { parseEventStream, sseBody, streamedRun } from './support/event-stream';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const KEY = 'sk-local-key-never-printed';

/**
 * The sample's server agents on a real model chosen from the environment (OPENAI_BASE_URL + OPENAI_API_KEY): the
 * official openai SDK against a local Chat Completions server, and POST /agents/:name/runs streamed as Server-Sent Events.
 */
describe('the sample on an OpenAI-protocol model, streamed as Server-Sent Events', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let model: OpenAIProtocolServer;
  let quotaFails: (() => void) | undefined;
  const token = () => mintToken(SECRET, { tenant: 'acme', user: 'alice' });

  /** The "model": quotes ACME and tries order.submit (not in the trader's allow list), then answers. */
  const play = (turnOf: ReturnType<typeof conversation>): FakeTurn => {
    if (turnOf.goal.startsWith('hang')) return { text: 'Let me think about that.', hang: true };
    if (turnOf.goal.startsWith('flood')) return { text: `${'x'.repeat(1000)} `.repeat(20_000) };
    if (turnOf.turn === 0) {
      if (turnOf.goal.startsWith('outage')) quotaFails?.();
      return {
        text: 'Quoting ACME, and submitting directly.',
        toolCalls: [
          { name: 'market.quote', arguments: { symbol: 'ACME' } },
          { name: 'order.submit', arguments: { symbol: 'ACME', side: 'buy', qty: 10, limitPrice: 101.25 } },
        ],
      };
    }
    return { text: 'ACME trades at 101.25; submitting it myself was refused.' };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    model = await openAIProtocolServer((r) => play(conversation(r)));
    const options = optionsFromEnv({ ZMODU_JWT_SECRET: SECRET, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: model.url });
    expect(options.model.description).toBe(
      `model: OpenAI-compatible (Chat Completions) "gpt-4o-mini" (the default; set ZMODU_MODEL) at ${model.url}`,
    );
    expect(options.model.description).not.toContain(KEY);
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.register({ ...options, dataSource: () => db.options() })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await model?.close();
    await db?.drop();
  });

  const post = (agent: string, goal: string) =>
    request(app.getHttpServer()).post(`/agents/${agent}/runs`).set('Authorization', `Bearer ${token()}`).send({ goal });

  it('streams a run: step events with guard decisions (an allowed and a denied call), deltas that add up to the answer, the final result', async () => {
    const res = await post('trader', 'Buy 10 ACME')
      .set('Accept', 'text/event-stream')
      .set('x-request-id', 'sse-real-0001')
      .buffer(true)
      .parse(sseBody);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['cache-control']).toMatch(/no-cache/);
    expect(res.headers['x-accel-buffering']).toBe('no');
    expect(res.headers['x-content-type-options']).toBe('nosniff'); // the edge's security headers stay
    expect(res.headers['x-request-id']).toBe('sse-real-0001');
    const events = parseEventStream(res.body as string);

    expect(events.map((e) => e.event).filter((e, i, all) => e !== all[i - 1])).toEqual(['delta', 'step', 'delta', 'final']);
    const final = events.at(-1)!.data as {
      runId: string;
      answer: string;
      stoppedReason: string;
      steps: Array<{ index: number; text: string; toolCalls: unknown[] }>;
    };
    expect(final).toMatchObject({ runId: 'sse-real-0001', stoppedReason: 'final', agent: 'trader' });
    const { steps, textOf } = streamedRun(events);
    expect(steps.map((s) => [s.step, s.toolCall.name, s.toolCall.decision])).toEqual([
      [0, 'market.quote', 'allowed'],
      [0, 'order.submit', 'denied'],
    ]);
    expect(steps[1].toolCall.cause).toMatch(/^denied_/);
    expect(JSON.parse(steps[1].toolCall.observation as string)).toEqual({ error: 'ToolDenied', reason: steps[1].toolCall.cause });
    // The step events carry the tool calls exactly as the result shows them (arguments, observations).
    expect(steps.map((s) => s.toolCall)).toEqual(final.steps.flatMap((s) => s.toolCalls));
    for (const step of final.steps) expect(textOf(step.index)).toBe(step.text);
    expect(textOf(1)).toBe(final.answer);
    expect(final.answer).toBe('ACME trades at 101.25; submitting it myself was refused.');

    // The model was asked to stream, through the official SDK, with the key from the environment.
    const sent = model.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true } });
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    const audit = await app.get(AgentAuditLog).query({ runId: 'sse-real-0001' });
    expect(audit.map((a) => [a.skill, a.decision])).toEqual([
      ['market.quote', 'allowed'],
      ['order.submit', 'denied'],
    ]);
  });

  it('answers the same run as JSON without the header, the model not asked to stream; the final event has that shape', async () => {
    const json = await post('trader', 'Buy 10 ACME').set('x-request-id', 'json-real-0001');
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(model.requests.at(-1)!.body.stream).toBeUndefined();
    const sse = await post('trader', 'Buy 10 ACME')
      .set('Accept', 'text/event-stream')
      .set('x-request-id', 'sse-real-0002')
      .buffer(true)
      .parse(sseBody);
    const final = parseEventStream(sse.body as string).at(-1)!;
    expect(final.event).toBe('final');
    const shape = (run: Record<string, unknown>) => ({
      ...run,
      runId: 'x',
      metrics: Object.keys(run.metrics as object).sort(),
      steps: (run.steps as Array<{ toolCalls: Array<Record<string, unknown>> }>).map((s) => ({
        ...s,
        toolCalls: s.toolCalls.map((c) => ({ ...c, durationMs: 0 })),
      })),
    });
    expect(shape(final.data as Record<string, unknown>)).toEqual(shape(json.body));
  });

  it('keeps errors before the run as plain HTTP answers with the header: 401, 403, 404, 400', async () => {
    const sse = (r: request.Test) => r.set('Accept', 'text/event-stream');
    const noToken = await sse(request(app.getHttpServer()).post('/agents/trader/runs')).send({ goal: 'x' });
    expect(noToken.status).toBe(401);
    expect(noToken.headers['content-type']).toMatch(/^application\/json/);
    expect(noToken.body.message).toMatch(/Missing bearer token/);
    const forbidden = await sse(request(app.getHttpServer()).post('/agents/trader/runs'))
      .set('Authorization', `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice', permissions: ['agent:read'] })}`)
      .send({ goal: 'x' });
    expect(forbidden.status).toBe(403);
    expect((await sse(post('nobody', 'x'))).status).toBe(404);
    const invalid = await sse(request(app.getHttpServer()).post('/agents/trader/runs').set('Authorization', `Bearer ${token()}`)).send({
      goal: '',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.headers['content-type']).toMatch(/^application\/json/);
  });

  it('answers 503 when the quota cannot be read before the stream opened, and an error event when it fails after', async () => {
    const store = (app.get(TokenQuota) as unknown as { store: { used: (...a: unknown[]) => Promise<number> } }).store;
    const used = store.used;
    const fail = () => (store.used = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')));
    try {
      fail();
      const before = await post('trader', 'Buy 10 ACME').set('Accept', 'text/event-stream');
      expect(before.status).toBe(503);
      expect(before.headers['retry-after']).toBe('5');
      expect(before.body.message).toMatch(/token quota cannot be read/);
      store.used = used;

      quotaFails = fail; // the model's first turn breaks the quota store: the check before the second turn fails
      const after = await post('trader', 'outage: buy 10 ACME').set('Accept', 'text/event-stream').buffer(true).parse(sseBody);
      expect(after.status).toBe(200);
      const events = parseEventStream(after.body as string);
      expect(events.filter((e) => e.event === 'step')).toHaveLength(2);
      expect(events.at(-1)).toEqual({
        event: 'error',
        data: {
          statusCode: 503,
          message: expect.stringMatching(/token quota cannot be read.*retry in 5 seconds/),
          runId: expect.any(String),
        },
      });
      expect(events.some((e) => e.event === 'final')).toBe(false);
    } finally {
      quotaFails = undefined;
      store.used = used;
    }
  });

  it('aborts the run, and its model request, when the client goes away in mid-stream', async () => {
    const server = app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const cutBefore = model.cut();
    const firstEvent = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/agents/trader/runs',
          headers: {
            authorization: `Bearer ${token()}`,
            'content-type': 'application/json',
            accept: 'text/event-stream',
            'x-request-id': 'sse-gone-0001',
          },
        },
        (res) => {
          res.setEncoding('utf8');
          res.once('data', (text: string) => {
            req.destroy(); // the client leaves after the first event
            resolve(text);
          });
        },
      );
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end(JSON.stringify({ goal: 'hang on a moment' }));
    });
    expect(firstEvent).toMatch(/^event: delta\ndata: \{"step":0,"text":"Let /);
    const deadline = Date.now() + 5000;
    while (model.cut() === cutBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(model.cut()).toBe(cutBefore + 1); // the model request was cut off, not left running
    expect(await app.get(AgentAuditLog).query({ runId: 'sse-gone-0001' })).toEqual([]);
  });
  it('streams only when the caller prefers it: q-values count, a tie goes to the stream the caller named', async () => {
    for (const [accept, stream] of [
      ['text/event-stream;q=0, application/json', false],
      ['application/json;q=1, text/event-stream;q=0.1', false],
      ['*/*', false],
      ['application/json, text/event-stream', true],
      ['TEXT/EVENT-STREAM', true],
      ['text/event-stream;q=0.5, */*;q=0.4', true],
    ] as const) {
      const res = await post('analyst', 'What is ACME at?').set('Accept', accept).buffer(true).parse(sseBody);
      expect({ accept, status: res.status, type: res.headers['content-type'] }).toEqual({
        accept,
        status: 200,
        type: stream ? 'text/event-stream' : expect.stringMatching(/^application\/json/),
      });
    }
  });

  it('stops the run and cuts the stream when the client stops reading (no unbounded queue on the server)', async () => {
    const server = app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const accepted: Socket[] = [];
    const onConnection = (socket: Socket) => accepted.push(socket);
    server.on('connection', onConnection);
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/agents/trader/runs',
      headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    });
    req.on('response', (res) => res.once('data', () => res.pause())); // reads one chunk, then nothing more
    req.on('error', () => undefined);
    req.end(JSON.stringify({ goal: 'flood the reader' }));
    try {
      const deadline = Date.now() + 30_000;
      while (!(accepted.length === 1 && accepted[0].destroyed) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      // The server let go of the connection and what it had queued for it (and aborted the run).
      expect(accepted.map((socket) => socket.destroyed)).toEqual([true]);
    } finally {
      server.off('connection', onConnection);
      req.destroy();
    }
  });
});
