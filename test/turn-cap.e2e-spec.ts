import { INestApplication } from '@nestjs/common';
import { AgentAuditLog } from '@zmodu/guard';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { modelFromEnv } from '../apps/sample/src/model';
import { anthropicProtocolServer, messagesConversation } from './support/anthropic-protocol-server';
import { parseEventStream, sseBody, streamedRun } from './support/event-stream';
import { conversation, openAIProtocolServer } from './support/openai-protocol-server';
import type { FakeTurn, LocalProtocolServer } from './support/protocol-faults';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';
const CALLS = 3000;
/** The trader's maxToolCallsPerTurn (the default). */
const PER_TURN = 16;

/** A compromised model: its first turn asks for 3,000 quotes at once; then it answers. */
const play = (turn: number): FakeTurn =>
  turn === 0
    ? { toolCalls: Array.from({ length: CALLS }, () => ({ name: 'market.quote', arguments: { symbol: 'ACME' } })) }
    : { text: 'done' };

interface ToolCall {
  name: string;
  decision: string;
  cause: string | null;
  observation: string;
}

describe.each([
  ['OpenAI', 'openai'],
  ['Anthropic', 'anthropic'],
] as const)('a %s-protocol model that sends 3,000 tool calls in one turn (official SDK, the sample over HTTP)', (_, kind) => {
  const apps = sampleAppsOnTestDatabase(SECRET);
  let app: INestApplication;
  let server: LocalProtocolServer<{ messages: ReadonlyArray<{ role: string; content: unknown; tool_calls?: unknown[] }> }>;
  const bearer = `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice' })}`;

  beforeAll(async () => {
    server =
      kind === 'openai'
        ? await openAIProtocolServer((r) => play(conversation(r).turn))
        : await anthropicProtocolServer((r) => play(messagesConversation(r).turn));
    const env =
      kind === 'openai'
        ? { OPENAI_API_KEY: 'local-key-0001', OPENAI_BASE_URL: server.url }
        : { ZMODU_MODEL_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'local-key-0001', ANTHROPIC_BASE_URL: server.url };
    app = await apps.boot({ model: modelFromEnv(env) });
    apps.forget(); // one app for both paths, closed in afterAll
  });

  afterAll(async () => {
    await app?.close();
    await server?.close();
  });

  /** What the model was sent back after the flood: how many tool calls its turn holds there, and how many results. */
  function sentBack(): { calls: number; results: number; bytes: number } {
    const body = server.requests.at(-1)!.body;
    const bytes = JSON.stringify(body).length;
    if (kind === 'openai') {
      const assistant = body.messages.find((m) => m.role === 'assistant');
      return { calls: assistant?.tool_calls?.length ?? 0, results: body.messages.filter((m) => m.role === 'tool').length, bytes };
    }
    const blocks = body.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string }>) : []));
    return {
      calls: blocks.filter((b) => b.type === 'tool_use').length,
      results: blocks.filter((b) => b.type === 'tool_result').length,
      bytes,
    };
  }

  async function expectOneSummary(runId: string, calls: ToolCall[], answerBytes: number) {
    expect(calls).toHaveLength(PER_TURN + 1);
    expect(calls.slice(0, PER_TURN).every((c) => c.decision === 'allowed')).toBe(true);
    const summary = calls[PER_TURN];
    expect(summary).toMatchObject({ name: 'market.quote', decision: 'denied', cause: 'denied_turn_cap' });
    expect(JSON.parse(summary.observation)).toEqual({
      error: 'ToolDenied',
      reason: 'denied_turn_cap',
      refused: CALLS - PER_TURN,
      maxToolCallsPerTurn: PER_TURN,
    });
    const audit = await app.get(AgentAuditLog).query({ runId, limit: 1000 });
    expect(audit).toHaveLength(PER_TURN + 1);
    expect(audit.filter((a) => a.cause === 'denied_turn_cap')).toHaveLength(1);
    expect(answerBytes).toBeLessThan(40_000);
    const back = sentBack();
    expect({ calls: back.calls, results: back.results }).toEqual({ calls: PER_TURN + 1, results: PER_TURN + 1 });
    expect(back.bytes).toBeLessThan(40_000);
  }

  it('plain: runs 16, refuses the other 2,984 in one summary denial, audited once, one observation back to the model (attack: a tool-call flood in a non-streamed turn)', async () => {
    const res = await request(app.getHttpServer())
      .post('/agents/trader/runs')
      .set('Authorization', bearer)
      .set('x-request-id', `${kind}-cap-plain`)
      .send({ goal: 'quote everything' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stoppedReason: 'final', answer: 'done' });
    expect(res.body.metrics.toolDenied).toEqual({ denied_turn_cap: 1 });
    expect(server.requests.at(-1)!.body).not.toHaveProperty('stream', true);
    await expectOneSummary(`${kind}-cap-plain`, res.body.steps[0].toolCalls as ToolCall[], res.text.length);
  });

  it('streamed: the same one summary, one step event for it (attack: a tool-call flood in a streamed turn)', async () => {
    const res = await request(app.getHttpServer())
      .post('/agents/trader/runs')
      .set('Authorization', bearer)
      .set('x-request-id', `${kind}-cap-sse`)
      .set('Accept', 'text/event-stream')
      .send({ goal: 'quote everything' })
      .buffer(true)
      .parse(sseBody);
    expect(res.status).toBe(200);
    const events = parseEventStream(res.body as string);
    const final = events.at(-1)!;
    expect(final).toMatchObject({ event: 'final', data: { stoppedReason: 'final', answer: 'done' } });
    expect(server.requests.at(-1)!.body).toHaveProperty('stream', true);
    const { steps } = streamedRun(events);
    expect(steps.map((s) => s.toolCall)).toEqual((final.data as { steps: Array<{ toolCalls: unknown[] }> }).steps[0].toolCalls);
    await expectOneSummary(`${kind}-cap-sse`, steps.map((s) => s.toolCall) as unknown as ToolCall[], (res.body as string).length);
  });
});
