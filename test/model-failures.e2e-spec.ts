import { ConsoleLogger, INestApplication, Logger } from '@nestjs/common';
import { AgentAuditLog } from '@zmodu/guard';
import { JsonLogger } from '../apps/sample/src/logging/json-logs.module';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { modelFromEnv } from '../apps/sample/src/model';
import { anthropicProtocolServer, messagesConversation } from './support/anthropic-protocol-server';
import { parseEventStream, sseBody } from './support/event-stream';
import { conversation, openAIProtocolServer } from './support/openai-protocol-server';
import type { FakeTurn, ProtocolFault } from './support/protocol-faults';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
/** No `sk-` prefix: no built-in pattern of the redactor knows it, only its registration as the provider's key does. */
const KEY = 'proxy-7Hq2Lm9XcV4bN8sK1dF6gJ3w';
const KEY_BASE64 = Buffer.from(KEY).toString('base64');
/** A proxy's traceback, the key on its last line (Python prints the exception there). */
const TRACEBACK = [
  'Traceback (most recent call last):',
  '  File "/srv/proxy/app.py", line 88, in forward',
  '    raise Upstream(f"key {key} refused")',
  `proxy.Upstream: key ${KEY} refused`,
].join('\n');

/**
 * What a hostile (or just careless) OpenAI-compatible proxy answers, by goal: the first turn asks for a quote of the
 * key itself (so that tool calls, their audit and their log lines carry it), the second fails echoing the key.
 */
function fault(goal: string): ProtocolFault {
  const retryNow = { 'retry-after': '0' };
  if (goal.startsWith('auth'))
    return { fault: 'status', status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}.` } }) };
  if (goal.startsWith('rate'))
    return {
      fault: 'status',
      status: 429,
      headers: retryNow,
      body: JSON.stringify({ error: { message: `Rate limit reached for ${KEY} (Authorization: Bearer ${KEY})` } }),
    };
  if (goal.startsWith('crash')) return { fault: 'status', status: 500, headers: retryNow, body: TRACEBACK };
  if (goal.startsWith('encoded'))
    return { fault: 'status', status: 500, headers: retryNow, body: `upstream refused credential ${KEY_BASE64}` };
  // A stream whose event is not JSON: the SDK logs its raw data, then fails.
  return { fault: 'body', contentType: 'text/event-stream', body: `event: message_start\ndata: not json, key=${KEY} ${KEY_BASE64}\n\n` };
}
const turn = (goal: string, n: number): FakeTurn | ProtocolFault =>
  n === 0 ? { text: 'Checking.', toolCalls: [{ name: 'market.quote', arguments: { symbol: KEY } }] } : fault(goal);

describe.each([
  ['OpenAI', 'openai'],
  ['Anthropic', 'anthropic'],
] as const)('a %s-protocol model server that echoes the API key in its errors (official SDK, the sample over HTTP)', (_, kind) => {
  const { boot } = sampleAppsOnTestDatabase(SECRET);
  const written: string[] = [];
  let app: INestApplication;
  let close: () => Promise<void>;
  const bearer = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice' })}`;

  beforeEach(async () => {
    const server =
      kind === 'openai'
        ? await openAIProtocolServer((r) => {
            const c = conversation(r);
            return turn(c.goal, c.turn);
          })
        : await anthropicProtocolServer((r) => {
            const c = messagesConversation(r);
            return turn(c.goal, c.turn);
          });
    close = () => server.close();
    // The key from the environment, as the sample reads it: the provider registers it; nothing else is told about it.
    const env =
      kind === 'openai'
        ? { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url }
        : { ZMODU_MODEL_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url };
    written.length = 0;
    app = await boot({
      model: modelFromEnv(env),
      logging: { level: 'debug', destination: { write: (line: string) => void written.push(line) } },
    });
    app.useLogger(app.get(JsonLogger));
  });

  afterEach(async () => {
    Logger.overrideLogger(new ConsoleLogger());
    await close?.();
  });

  const post = (goal: string, runId: string) =>
    request(app.getHttpServer()).post('/agents/trader/runs').set('Authorization', bearer).set('x-request-id', runId).send({ goal });

  /** Every place the test can read: the key in none of them, in any form. */
  async function expectNoKey(places: Record<string, string>, runIds: string[]) {
    const audit = await app.get(AgentAuditLog).query({ tenantId: 'acme', limit: 1000 });
    const ofRuns = audit.filter((a) => runIds.includes(a.runId));
    expect(ofRuns.length).toBeGreaterThanOrEqual(runIds.length); // each run's first turn asked for a quote
    const all = { ...places, audit: JSON.stringify(ofRuns), logs: written.join('') };
    for (const [place, text] of Object.entries(all))
      for (const form of [KEY, KEY_BASE64, KEY.slice(0, 16)])
        expect({ place, leaked: text.includes(form) ? form : null }).toEqual({ place, leaked: null });
  }

  it('tells a 401, a 429 and a 500 as their kind and status with a short redacted excerpt: no key, no traceback in the run result, the HTTP answer, the audit or the logs (attack: a proxy echoes the key in its error body)', async () => {
    const answers: Record<string, string> = {};
    const expected: Array<[string, RegExp]> = [
      [
        'auth',
        /: the model server answered HTTP 401 \(authentication failed: check the API key\): Incorrect API key provided: \[redacted\]\.$/,
      ],
      [
        'rate',
        /: the model server answered HTTP 429 \(rate limited, 3 attempts\): Rate limit reached for \[redacted\] \(Authorization: Bearer \[redacted\]\)$/,
      ],
      ['crash', /: the model server answered HTTP 500 \(server error, 3 attempts\): Traceback \(most recent call last\):$/],
      ['encoded', /: the model server answered HTTP 500 \(server error, 3 attempts\): upstream refused credential \[redacted\]$/],
    ];
    for (const [goal, error] of expected) {
      const res = await post(`${goal}: quote it`, `${kind}-${goal}-0001`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ stoppedReason: 'model_error', error: expect.stringMatching(error) });
      expect(res.body.steps[0].toolCalls[0]).toMatchObject({ name: 'market.quote', arguments: { symbol: '[redacted]' } });
      answers[goal] = res.text;
    }
    expect(answers.crash).not.toContain('/srv/proxy/app.py');
    // The agent's own line for the failure was written (and redacted), like the SDK's.
    expect(written.join('')).toContain('model error');
    await expectNoKey(
      answers,
      expected.map(([goal]) => `${kind}-${goal}-0001`),
    );
  });

  it('keeps the key out of a streamed run (every SSE event) and out of the SDK log line of a stream that is not JSON', async () => {
    const rate = await post('rate: quote it', `${kind}-sse-0001`).set('Accept', 'text/event-stream').buffer(true).parse(sseBody);
    const garbage = await post('garbage: quote it', `${kind}-sse-0002`).set('Accept', 'text/event-stream').buffer(true).parse(sseBody);
    for (const res of [rate, garbage]) {
      const final = parseEventStream(res.body as string).at(-1)!;
      expect(final).toMatchObject({ event: 'final', data: { stoppedReason: 'model_error' } });
    }
    // The SDK logs the raw data of the event it could not parse: through Nest's logger, redacted, captured here.
    expect(written.join('')).toMatch(/Could not parse message into JSON: not json, key=\[redacted\] \[redacted\]/);
    await expectNoKey({ rate: rate.body as string, garbage: garbage.body as string }, [`${kind}-sse-0001`, `${kind}-sse-0002`]);
  });

  it("keeps the key out of a background run's stored error (POST /goals, then GET /agents/runs/:id)", async () => {
    const posted = await request(app.getHttpServer())
      .post('/agents/trader/goals')
      .set('Authorization', bearer)
      .send({ goal: 'auth: quote it' });
    expect(posted.status).toBe(202);
    const read = () => request(app.getHttpServer()).get(`/agents/runs/${posted.body.runId}`).set('Authorization', bearer);
    let run = await read();
    for (const until = Date.now() + 20_000; run.body.status !== 'failed' && Date.now() < until; run = await read())
      await new Promise((r) => setTimeout(r, 50));
    expect(run.body).toMatchObject({
      status: 'failed',
      stoppedReason: 'model_error',
      error: expect.stringMatching(/HTTP 401 \(authentication failed/),
    });
    await expectNoKey({ stored: run.text }, [posted.body.runId]);
  });
});
