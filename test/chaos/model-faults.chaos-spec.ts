import { INestApplication } from '@nestjs/common';
import { AgentRegistry, AnthropicModelProvider, ModelProvider, OpenAIModelProvider } from '@zmodu/agent';
import { AgentAuditLog } from '@zmodu/guard';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { mintToken } from '../../apps/sample/src/auth/dev-token';
import { deskLog } from '../../apps/sample/src/trading/order-commands';
import { anthropicProtocolServer, messagesConversation } from '../support/anthropic-protocol-server';
import { conversation, openAIProtocolServer } from '../support/openai-protocol-server';
import { sampleOnOwnServerForSuite } from '../support/own-postgres';
import { FakeTurn, ProtocolFault } from '../support/protocol-faults';
import { CHAOS_SECRET as SECRET, sleep } from '../support/sample-process';
import { timersDuring } from '../../libs/agent/src/__fixtures__/scheduled-timers';

/** The providers' request timeout and retries (the SDKs retry 408, 409, 429 and 5xx, honouring Retry-After). */
const TIMEOUT_MS = 1000;
const MAX_RETRIES = 2;
const ATTEMPTS = MAX_RETRIES + 1;

/** What the model server plays for one goal: a turn or a fault, by the turn of the run and the request's number. */
type Script = (turn: number, attempt: number) => FakeTurn | ProtocolFault;

/** A healthy trader: quote, draft (a write: one sample_orders row with the run id), then a final answer. */
const healthy: Script = (turn) =>
  [
    { text: 'Quoting ACME.', toolCalls: [{ name: 'market.quote', arguments: { symbol: 'ACME' } }] },
    {
      text: 'Drafting the order.',
      toolCalls: [{ name: 'order.draft', arguments: { symbol: 'ACME', side: 'buy', qty: 5, limitPrice: 101.25 } }],
    },
    { text: 'Drafted the order for a human to submit.' },
  ][Math.min(turn, 2)];

interface FaultyServer {
  readonly url: string;
  readonly requests: ReadonlyArray<{ readonly at: number }>;
  cut(): number;
  close(): Promise<void>;
}

interface Side {
  readonly name: string;
  /** A local server of the provider's protocol that plays `play` by the goal and the turn. */
  server(play: (goal: string, turn: number) => FakeTurn | ProtocolFault): Promise<FaultyServer>;
  provider(url: string): ModelProvider;
  /** The provider's name as its errors give it. */
  readonly label: RegExp;
  /** A 200 answer of the right content type whose JSON has the wrong types in the protocol's own fields. */
  readonly wrongTypes: string;
}

const SIDES: Side[] = [
  {
    name: 'OpenAI Chat Completions',
    server: (play) =>
      openAIProtocolServer((r) => {
        const c = conversation(r);
        return play(c.goal, c.turn);
      }),
    provider: (url) =>
      new OpenAIModelProvider({ model: 'local', apiKey: 'local', baseURL: url, timeoutMs: TIMEOUT_MS, maxRetries: MAX_RETRIES }),
    label: /OpenAIModelProvider/,
    wrongTypes: JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 42 }, finish_reason: 'stop' }],
    }),
  },
  {
    name: 'Anthropic Messages',
    server: (play) =>
      anthropicProtocolServer((r) => {
        const c = messagesConversation(r);
        return play(c.goal, c.turn);
      }),
    provider: (url) =>
      new AnthropicModelProvider({ model: 'local', apiKey: 'local', baseURL: url, timeoutMs: TIMEOUT_MS, maxRetries: MAX_RETRIES }),
    label: /AnthropicModelProvider/,
    wrongTypes: JSON.stringify({
      id: 'x',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: { not: 'text' } }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    }),
  },
];

/**
 * The chaos suite: the model provider fails, through the official SDKs against local servers of each protocol, under
 * agent runs of the sample on a PostgreSQL server of its own. Every affected run ends in a terminal state that names
 * the fault (never succeeded, never past its deadline, never a 500); a write done in an earlier turn stays, with its
 * audit entry; the same run again (same run id) does not write twice; and the same app serves again once the model is back.
 */
describe.each(SIDES)('chaos: the model provider fails ($name)', (side) => {
  const scripts = new Map<string, Script>();
  const attempts = new Map<string, number>();
  let server: FaultyServer;
  let app: INestApplication;
  let ds: DataSource;
  let goalNo = 0;
  const bearer = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice' })}`;

  /** A goal of its own for `script` (the server finds the script by the goal). */
  const goal = (text: string, script: Script) => {
    const g = `${text} [${++goalNo}]`;
    scripts.set(g, script);
    return g;
  };
  /** The goal of every request the server got, in order (the server finds its script by the goal). */
  const goalOfRequest: string[] = [];
  const requestsSince = (from: number) => server.requests.length - from;
  /**
   * The requests since `from`, counted by goal: a case asserts the requests of its own run and that no other goal sent
   * one meanwhile (a run of an earlier case still retrying, or run again, shows here by its goal).
   */
  const requestsByGoalSince = (from: number): Record<string, number> => {
    const counts: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const g of goalOfRequest.slice(from)) counts[g] = (counts[g] ?? 0) + 1;
    return { ...counts };
  };

  sampleOnOwnServerForSuite(
    SECRET,
    (own) => {
      app = own.app;
      ds = app.get(DataSource);
    },
    async () => {
      server = await side.server((g, turn) => {
        const n = (attempts.get(g) ?? 0) + 1;
        attempts.set(g, n);
        goalOfRequest.push(g);
        return (scripts.get(g) ?? healthy)(turn, n);
      });
      return { model: { provider: side.provider(server.url) } };
    },
  );
  // After the sample's afterAll (declared first): the model server goes once the app is closed.
  afterAll(async () => {
    await server?.close();
  });

  const runOverHttp = (agent: string, g: string, runId?: string) => {
    const req = request(app.getHttpServer()).post(`/agents/${agent}/runs`).set('Authorization', bearer);
    if (runId) req.set('x-request-id', runId);
    return req.send({ goal: g }).timeout({ deadline: 30_000 });
  };

  /** A goal posted to the worker, followed to its terminal state (never left queued or running). */
  const postAndWait = async (agent: string, g: string) => {
    const posted = await request(app.getHttpServer()).post(`/agents/${agent}/goals`).set('Authorization', bearer).send({ goal: g });
    expect(posted.status).toBe(202);
    const id = posted.body.runId as string;
    for (let i = 0; i < 200; i++) {
      const run = await request(app.getHttpServer()).get(`/agents/runs/${id}`).set('Authorization', bearer);
      expect(run.status).toBe(200);
      if (run.body.status !== 'queued' && run.body.status !== 'running') return run.body;
      await sleep(50);
    }
    throw new Error(`run ${id} is still queued or running after 10 s`);
  };

  const ordersOf = async (runId: string) =>
    (await ds.query(`SELECT count(*)::int AS n FROM sample_orders WHERE run_id = $1`, [runId]))[0].n as number;
  /** The audit entries of a run as stored (the audit log writes in batches: flushed first). */
  const auditOf = async (runId: string) => {
    await app.get(AgentAuditLog).flush();
    return ds.query(`SELECT skill, decision, cause, outcome FROM zmodu_audit_log WHERE run_id = $1 ORDER BY id`, [runId]) as Promise<
      Array<{ skill: string; decision: string; cause: string | null; outcome: string }>
    >;
  };

  /** A failed run as a caller sees it: a model error naming the provider and the fault, not an answer. */
  const expectModelError = (body: { stoppedReason: string; error?: string }, fault: RegExp) => {
    expect(body.stoppedReason).toBe('model_error');
    expect(body.error).toMatch(side.label);
    expect(body.error).toMatch(fault);
  };

  it('a server that never answers: the posted goal ends failed, naming the timeout, after maxRetries + 1 requests', async () => {
    const from = server.requests.length;
    const g = goal('Quote ACME', () => ({ fault: 'silent' }));
    const run = await postAndWait('trader', g);
    expect(run.status).toBe('failed');
    expectModelError(run, /did not answer within 1000 ms/);
    // Three timeouts (each its own request, cut at timeoutMs) and no fourth: the run waited for nothing more.
    expect(requestsByGoalSince(from)).toEqual({ [g]: ATTEMPTS });
  });

  it("an answer that would come after the run's deadline: the run ends timed_out at its deadline, the request is cut", async () => {
    const from = server.requests.length;
    const cutBefore = server.cut();
    const g = goal('Quote ACME', () => ({ fault: 'late', ms: 5000, turn: { text: 'Too late to matter.' } }));
    // The answer would come after 5 s: the run's end is its deadline's (its reason and message), with no answer.
    const result = await app
      .get(AgentRegistry)
      .get('trader')
      .run(g, { tenantId: 'acme', userId: 'alice', permissions: ['market:read', 'order:draft'], timeoutMs: 600 });
    expect(result.stoppedReason).toBe('timed_out');
    expect(result.error).toMatch(/deadline of 600 ms/);
    expect(result.answer).toBe('');
    expect(requestsSince(from)).toBe(1); // an aborted request is not retried
    for (let i = 0; i < 40 && server.cut() === cutBefore; i++) await sleep(25);
    expect(server.cut()).toBe(cutBefore + 1);
  });

  it('500s: the run ends model_error naming the status, after maxRetries + 1 requests; never a 500 of ours', async () => {
    const from = server.requests.length;
    const g = goal('Quote ACME', () => ({ fault: 'status', status: 500 }));
    const res = await runOverHttp('trader', g);
    expect(res.status).toBe(200);
    expectModelError(res.body, /\b500\b/);
    expect(res.body.steps).toEqual([]);
    expect(requestsByGoalSince(from)).toEqual({ [g]: ATTEMPTS });
  });

  it('429 and 503 with Retry-After: retried after the wait, at most maxRetries times, then told; a passing one recovers', async () => {
    const busy = server.requests.length;
    const { result: res, timers } = await timersDuring(
      () => server.requests.length - busy,
      () =>
        runOverHttp(
          'trader',
          goal('Quote ACME', () => ({ fault: 'status', status: 429, headers: { 'retry-after': '1' } })),
        ),
    );
    expectModelError(res.body, /\b429\b/);
    expect(server.requests.slice(busy)).toHaveLength(ATTEMPTS);
    // Retried after the wait: after each 429 but the last, the SDK waited the Retry-After's 1 s, and the wait ran out
    // before the next request was sent.
    for (let answered = 1; answered < ATTEMPTS; answered++)
      expect(timers).toContainEqual({ ms: 1000, whenSet: answered, whenFired: answered });
    // A 503 (Retry-After: 1) once, then the model is back: the SDK's retry hides it, and the run succeeds.
    const from = server.requests.length;
    const g = goal('Buy 5 ACME', (turn, attempt) =>
      attempt === 1 ? { fault: 'status', status: 503, headers: { 'retry-after': '1' } } : healthy(turn, attempt),
    );
    const ok = await runOverHttp('trader', g);
    expect(ok.status).toBe(200);
    expect(ok.body.stoppedReason).toBe('final');
    expect(requestsSince(from)).toBe(4); // 503, then three turns
    expect(await ordersOf(ok.body.runId)).toBe(1);
  });

  describe('garbage answers end the run model_error, naming the provider and what was wrong; nothing runs', () => {
    const garbage: Array<[string, () => ProtocolFault, RegExp]> = [
      ['text that is not JSON', () => ({ fault: 'body', body: '{"id": "x", "choices": [ {' }), /answer is not valid JSON/],
      [
        'an HTML error page with status 200',
        () => ({ fault: 'body', body: '<html>Bad gateway</html>', contentType: 'text/html' }),
        /not .*answer/,
      ],
      ['JSON of another shape', () => ({ fault: 'body', body: '{"hello":"world"}' }), /answer is not a (Chat Completions|Messages) answer/],
      ['JSON null', () => ({ fault: 'body', body: 'null' }), /answer is not a (Chat Completions|Messages) answer/],
      [
        'JSON with wrong types in its own fields',
        () => ({ fault: 'body', body: side.wrongTypes }),
        /answer is not a (Chat Completions|Messages) answer/,
      ],
      ['a body cut off in the middle', () => ({ fault: 'truncated' }), /cut off before the answer was complete/],
    ];
    it.each(garbage)('%s', async (_what, fault, reason) => {
      const from = server.requests.length;
      const res = await runOverHttp('trader', goal('Quote ACME', fault));
      expect([res.status, res.status === 200 ? '' : res.text]).toEqual([200, '']);
      expectModelError(res.body, reason);
      expect(res.body.steps).toEqual([]);
      expect(await ordersOf(res.body.runId)).toBe(0);
      // 200 garbage is not retried; a connection dropped mid-body may be (at most maxRetries times).
      expect(requestsSince(from)).toBeGreaterThanOrEqual(1);
      expect(requestsSince(from)).toBeLessThanOrEqual(ATTEMPTS);
    });

    it('a streamed answer cut off in the middle: the stream ends with the run failed, never a short answer', async () => {
      const res = await request(app.getHttpServer())
        .post('/agents/trader/runs')
        .set('Authorization', bearer)
        .set('Accept', 'text/event-stream')
        .send({ goal: goal('Quote ACME', () => ({ fault: 'truncated' })) })
        .buffer(true)
        .parse((r, done) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString()));
          r.on('end', () => done(null, text));
        })
        .timeout({ deadline: 30_000 });
      expect(res.status).toBe(200);
      const events = String(res.body)
        .split('\n\n')
        .filter((e) => e.startsWith('event: '))
        .map((e) => ({ type: e.slice(7, e.indexOf('\n')), data: JSON.parse(e.slice(e.indexOf('data: ') + 6)) }));
      const final = events.find((e) => e.type === 'final');
      expect(final).toBeDefined();
      expectModelError(final?.data, /cut off|ended before the turn was complete/);
      expect(final?.data.steps).toEqual([]);
    });
  });

  it('tool calls with arguments that are not JSON: each answered as a tool error and audited, then the run stops', async () => {
    const runId = `chaos-malformed-${goalNo}-${side.name.slice(0, 6).toLowerCase()}`;
    const g = goal('Buy 5 ACME', () => ({
      text: 'Drafting.',
      toolCalls: [{ name: 'order.draft', arguments: null, raw: '{"symbol": "ACME", "side": "buy", "qty": 5' }],
    }));
    const res = await runOverHttp('trader', g, runId);
    expect(res.status).toBe(200);
    expect(res.body.stoppedReason).toBe('malformed_tool_calls');
    expect(res.body.error).toMatch(/not JSON/);
    const calls = res.body.steps.flatMap((s: { toolCalls: Array<{ observation: string; ok: boolean }> }) => s.toolCalls);
    expect(calls).toHaveLength(3);
    for (const c of calls) expect([c.ok, JSON.parse(c.observation).error]).toEqual([false, 'InvalidArguments']);
    expect((await auditOf(runId)).map((a) => [a.skill, a.outcome])).toEqual(Array(3).fill(['order.draft', 'invalid_arguments']));
    expect(await ordersOf(runId)).toBe(0);
  });

  it('a tool the agent does not have (unknown, or staged): refused, audited, nothing runs', async () => {
    const runId = `chaos-unknown-${goalNo}-${side.name.slice(0, 6).toLowerCase()}`;
    const g = goal('Buy 5 ACME', (turn) =>
      turn === 0
        ? {
            text: 'Wiring the money.',
            toolCalls: [
              { name: 'wire.transfer', arguments: { amount: 1_000_000 } },
              { name: 'order.submit', arguments: { symbol: 'ACME', side: 'buy', qty: 5, limitPrice: 101.25 } },
            ],
          }
        : { text: 'Both calls were refused; nothing was done.' },
    );
    const res = await runOverHttp('trader', g, runId);
    expect(res.status).toBe(200);
    expect(
      res.body.steps[0].toolCalls.map((c: { name: string; decision: string; cause: string }) => [c.name, c.decision, c.cause]),
    ).toEqual([
      ['wire.transfer', 'denied', 'denied_not_listed'],
      ['order.submit', 'denied', 'denied_not_listed'],
    ]);
    expect((await auditOf(runId)).map((a) => [a.skill, a.decision, a.cause])).toEqual([
      ['wire.transfer', 'denied', 'denied_not_listed'],
      ['order.submit', 'denied', 'denied_not_listed'],
    ]);
    expect(await ordersOf(runId)).toBe(0);
  });

  it('a failure after a write in an earlier turn: the write stays with its audit entry, and the same run again writes nothing twice', async () => {
    const [order] = await ds.query(
      `INSERT INTO sample_orders (tenant_id, user_id, symbol, side, qty, limit_price, status, run_id)
       VALUES ('acme', 'alice', 'ACME', 'buy', 3, 100, 'draft', 'chaos-seed') RETURNING id`,
    );
    let broken = true;
    const g = goal(`cancel ${order.id}`, (turn) => {
      if (turn === 0)
        return {
          text: 'Cancelling the order.',
          toolCalls: [{ name: 'command.execute', arguments: { command: 'order.cancel', args: { orderId: order.id, reason: 'chaos' } } }],
        };
      if (broken) return { fault: 'status', status: 500 };
      if (turn === 1)
        return {
          text: 'Noting it.',
          toolCalls: [
            { name: 'notification.send', arguments: { channel: 'desk-log', subject: 'cancel', message: `order ${order.id} cancelled` } },
          ],
        };
      return { text: 'Cancelled and noted on the desk log.' };
    });
    const runId = `chaos-write-${side.name.slice(0, 6).toLowerCase()}-${order.id.slice(0, 8)}`;
    const first = await runOverHttp('ops', g, runId);
    expect(first.status).toBe(200);
    expectModelError(first.body, /\b500\b/);
    const [cmd] = first.body.steps[0].toolCalls;
    expect(cmd).toMatchObject({ name: 'command.execute', decision: 'allowed', ok: true });
    const { eventId, replayed } = JSON.parse(cmd.observation);
    expect(replayed).toBe(false);
    // Committed before the model failed: the order is cancelled, its event and its audit entry are there.
    expect((await ds.query('SELECT status FROM sample_orders WHERE id = $1', [order.id]))[0].status).toBe('cancelled');
    const events = () => ds.query(`SELECT id FROM zmodu_outbox WHERE payload->>'orderId' = $1`, [order.id]);
    expect(await events()).toEqual([{ id: eventId }]);
    expect((await auditOf(runId)).map((a) => [a.skill, a.decision, a.outcome])).toEqual([['command.execute', 'allowed', 'ok']]);

    // The model is back; the caller runs the same goal again with the same run id: the command answers its stored
    // event and runs nothing, and the run goes on to the note and the answer.
    broken = false;
    const again = await runOverHttp('ops', g, runId);
    expect(again.status).toBe(200);
    expect(again.body.stoppedReason).toBe('final');
    expect(JSON.parse(again.body.steps[0].toolCalls[0].observation)).toEqual({ eventId, replayed: true });
    expect(await events()).toEqual([{ id: eventId }]);
    expect(deskLog.filter((m) => m.message === `order ${order.id} cancelled`)).toHaveLength(1);
    expect((await auditOf(runId)).map((a) => [a.skill, a.outcome])).toEqual([
      ['command.execute', 'ok'],
      ['command.execute', 'ok'],
      ['notification.send', 'ok'],
    ]);
  });

  it('once the model is back, the same app serves a run and a posted goal, and no run is left queued or running', async () => {
    const res = await runOverHttp('trader', goal('Buy 5 ACME', healthy));
    expect(res.status).toBe(200);
    expect(res.body.stoppedReason).toBe('final');
    expect(await ordersOf(res.body.runId)).toBe(1);
    const posted = await postAndWait('trader', goal('Buy 5 ACME', healthy));
    expect([posted.status, posted.stoppedReason]).toEqual(['succeeded', 'final']);
    expect(await ordersOf(posted.id)).toBe(1);
    expect((await request(app.getHttpServer()).get('/health/ready')).status).toBe(200);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM zmodu_agent_runs WHERE status IN ('queued', 'running')`);
    expect(n).toBe(0);
  });
});
