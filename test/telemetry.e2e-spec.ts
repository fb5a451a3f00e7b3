import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { optionsFromEnv } from '../apps/sample/src/config';
import { conversation, openAIProtocolServer, OpenAIProtocolServer } from './support/openai-protocol-server';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

/**
 * The sample with an OpenTelemetry SDK registered by the application (here: an in-memory exporter), on a real model
 * client: the official openai SDK against a local Chat Completions server that reports usage (120 in, 30 out a turn).
 */
describe('the sample traced: GenAI spans of a run over HTTP on an OpenAI-protocol model', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const { boot } = sampleAppsOnTestDatabase(SECRET);
  let model: OpenAIProtocolServer;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
    // The model quotes ACME and tries order.submit (a staged skill: only the pipeline runs it) with an API key in its arguments.
    model = await openAIProtocolServer((r) =>
      conversation(r).turn === 0
        ? {
            text: 'Quoting, then submitting.',
            toolCalls: [
              { name: 'market.quote', arguments: { symbol: 'ACME' } },
              { name: 'order.submit', arguments: { symbol: 'ACME', side: 'buy', qty: 10, note: 'sk-proj-Zy9XwVuTsRqPoNmLkJiHgFe' } },
            ],
          }
        : { text: 'ACME quoted; submitting was refused.' },
    );
  });

  afterAll(async () => {
    await model?.close();
    trace.disable();
    context.disable();
    await provider.shutdown();
  });

  it('invoke_agent trader, two chat gpt-4o-mini (CLIENT) with the usage the server reported, and one execute_tool per call, allowed or denied', async () => {
    const { model: real } = optionsFromEnv({ ZMODU_JWT_SECRET: SECRET, OPENAI_API_KEY: 'sk-local', OPENAI_BASE_URL: model.url });
    const app = await boot({ model: real });
    exporter.reset();
    const res = await request(app.getHttpServer())
      .post('/agents/trader/runs')
      .set('Authorization', `Bearer ${mintToken(SECRET, { tenant: 'acme', user: 'alice' })}`)
      .send({ goal: 'Buy 10 ACME' });
    expect(res.status).toBe(200);
    const runId = (res.body as { runId: string }).runId;

    const spans = exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name.startsWith('@zmodu/'));
    expect(spans.map((s) => s.name).sort()).toEqual([
      'chat gpt-4o-mini',
      'chat gpt-4o-mini',
      'execute_tool market.quote',
      'execute_tool order.submit',
      'invoke_agent trader',
    ]);
    const run = spans.find((s) => s.name === 'invoke_agent trader')!;
    const runSpanId = run.spanContext().spanId;
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.agent.name': 'trader',
      'gen_ai.usage.input_tokens': 240,
      'gen_ai.usage.output_tokens': 60,
      'zmodu.run.id': runId,
      'zmodu.tenant.id': 'acme',
      'zmodu.run.stopped_reason': 'final',
    });
    for (const child of spans.filter((s) => s !== run)) {
      expect(child.parentSpanContext?.spanId).toBe(runSpanId);
      expect(child.kind).toBe(child.name.startsWith('chat') ? SpanKind.CLIENT : SpanKind.INTERNAL);
    }
    for (const chat of spans.filter((s) => s.name.startsWith('chat'))) {
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
      });
    }
    const quote = spans.find((s) => s.name === 'execute_tool market.quote')!;
    const submit = spans.find((s) => s.name === 'execute_tool order.submit')!;
    expect(quote.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_1',
      'zmodu.guard.decision': 'allowed',
      'zmodu.skill.outcome': 'ok',
    });
    expect(quote.status.code).toBe(SpanStatusCode.UNSET);
    expect(submit.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_2',
      'zmodu.guard.decision': 'denied',
      'zmodu.guard.cause': 'denied_not_listed',
      'error.type': 'ToolDenied',
    });
    expect(submit.status.code).toBe(SpanStatusCode.ERROR);
    const recorded = JSON.stringify(spans.map((s) => s.attributes));
    expect(recorded).not.toContain('sk-proj-');
    expect(recorded).not.toContain('Buy 10 ACME');
  });
});
