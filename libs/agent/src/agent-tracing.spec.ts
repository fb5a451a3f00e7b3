import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TestingModule } from '@nestjs/testing';
import { Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { AgentRegistry } from './agent.registry';
import { AGENT_PACKAGE_VERSION } from './agent-tracing';
import { ModelProvider, ModelRequest, ModelTurn } from './providers/model-provider';
import { ScriptedModelProvider, ScriptedTurn } from './providers/scripted-model.provider';
import { compileWorkerApp, SCOPE, spec, until } from './worker/__fixtures__/worker-fixtures';
import { AgentWorker } from './worker/agent-worker';
import { AgentRunRecord } from './worker/worker.ports';

/** A scripted model that says it is an OpenAI model (its name, as OpenAIModelProvider's: `openai:<model>`). */
class NamedModel implements ModelProvider {
  private readonly script: ScriptedModelProvider;
  constructor(
    readonly name: string,
    turns: ScriptedTurn[],
  ) {
    this.script = new ScriptedModelProvider(turns);
  }
  complete(request: ModelRequest): Promise<ModelTurn> {
    return this.script.complete(request);
  }
}

class RateLimitError extends Error {}

const SECRET_SYMBOL = 'ACME-sk-proj-Zy9XwVuTsRqPoNmLkJiHgFe';

describe('OpenTelemetry spans of runs, model calls and tool calls (GenAI semantic conventions)', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let app: TestingModule | undefined;

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().filter((s) => s.name === name);
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

  it('a run is invoke_agent (INTERNAL) with chat (CLIENT) and execute_tool (INTERNAL) children: allowed, denied and failing calls', async () => {
    const model = new NamedModel('openai:gpt-test', [
      {
        toolCalls: [
          { id: 'call_quote', name: 'market.quote', arguments: { symbol: SECRET_SYMBOL } },
          { id: 'call_submit', name: 'order.submit', arguments: { symbol: SECRET_SYMBOL, qty: 10 } },
          { id: 'call_broken', name: 'market.broken', arguments: {} },
        ],
        usage: { inputTokens: 100, outputTokens: 20 },
      },
      { text: 'Quoted; the feed is down.', usage: { inputTokens: 150, outputTokens: 7 } },
    ]);
    app = await compileWorkerApp([spec(model)], undefined);
    await app.init();
    const result = await app.get(AgentRegistry).get('trader').run('Quote ACME', SCOPE);
    expect(result.stoppedReason).toBe('final');

    const [run] = named('invoke_agent trader');
    expect(run).toBeDefined();
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.instrumentationScope).toMatchObject({ name: '@zmodu/agent', version: AGENT_PACKAGE_VERSION });
    expect(run.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.agent.name': 'trader',
      'gen_ai.usage.input_tokens': 250,
      'gen_ai.usage.output_tokens': 27,
      'zmodu.run.id': result.runId,
      'zmodu.tenant.id': 't1',
      'zmodu.run.stopped_reason': 'final',
      'zmodu.run.steps': 2,
      'zmodu.run.tool_calls': 3,
      'zmodu.run.tool_denied': 1,
      'zmodu.run.pending_approvals': 0,
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);

    const chats = named('chat gpt-test');
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(chat)).toBe(run.spanContext().spanId);
      expect(chat.spanContext().traceId).toBe(run.spanContext().traceId);
    }
    expect(chats.map((c) => c.attributes)).toEqual([
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 20,
        'zmodu.model.tool_calls': 3,
      },
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.usage.input_tokens': 150,
        'gen_ai.usage.output_tokens': 7,
        'zmodu.model.tool_calls': 0,
      },
    ]);

    const tool = (name: string) => {
      const found = named(`execute_tool ${name}`);
      expect(found).toHaveLength(1);
      expect(found[0].kind).toBe(SpanKind.INTERNAL);
      expect(parentOf(found[0])).toBe(run.spanContext().spanId);
      expect(found[0].instrumentationScope).toMatchObject({ name: '@zmodu/skills' });
      return found[0];
    };
    const common = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.type': 'function', 'gen_ai.agent.name': 'trader' };
    const ids = { 'zmodu.run.id': result.runId, 'zmodu.tenant.id': 't1' };
    const quote = tool('market.quote');
    expect(quote.attributes).toEqual({
      ...common,
      ...ids,
      'gen_ai.tool.name': 'market.quote',
      'gen_ai.tool.description': 'Quote',
      'gen_ai.tool.call.id': 'call_quote',
      'zmodu.skill.action': 'read',
      'zmodu.guard.decision': 'allowed',
      'zmodu.skill.outcome': 'ok',
      'zmodu.skill.tokens': expect.any(Number),
    });
    expect(quote.status.code).toBe(SpanStatusCode.UNSET);

    // Not in the allow list (and not a registered skill): refused by the guard, with its cause.
    const submit = tool('order.submit');
    expect(submit.attributes).toEqual({
      ...common,
      ...ids,
      'gen_ai.tool.name': 'order.submit',
      'gen_ai.tool.call.id': 'call_submit',
      'zmodu.skill.action': 'execute',
      'zmodu.guard.decision': 'denied',
      'zmodu.guard.cause': 'denied_not_listed',
      'zmodu.skill.outcome': 'denied',
      'zmodu.skill.tokens': 0,
      'error.type': 'ToolDenied',
    });
    expect(submit.status).toEqual({ code: SpanStatusCode.ERROR, message: 'denied_not_listed' });

    // Allowed, and its handler threw.
    const broken = tool('market.broken');
    expect(broken.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_broken',
      'zmodu.guard.decision': 'allowed',
      'zmodu.skill.outcome': 'error',
      'error.type': 'SkillFailed',
    });
    expect(broken.attributes).not.toHaveProperty('zmodu.guard.cause');
    expect(broken.status.code).toBe(SpanStatusCode.ERROR);

    // Neither arguments nor results (nor the goal) are in any span.
    expect(spans()).toHaveLength(6);
    const recorded = JSON.stringify(spans().map((s) => [s.name, s.attributes, s.status, s.events]));
    expect(recorded).not.toContain('ACME');
    expect(recorded).not.toContain('101.5');
    expect(recorded).not.toContain('market feed is down');
  });

  it("a model error: the chat span has the client's error class, the run span the stop reason", async () => {
    const failing: ModelProvider = {
      name: 'anthropic:claude-test',
      complete: async () => {
        throw new RateLimitError('429 from the model');
      },
    };
    app = await compileWorkerApp([spec(failing)], undefined);
    await app.init();
    const result = await app.get(AgentRegistry).get('trader').run('Quote ACME', SCOPE);
    expect(result.stoppedReason).toBe('model_error');
    const [chat] = named('chat claude-test');
    expect(chat.attributes).toMatchObject({ 'gen_ai.provider.name': 'anthropic', 'error.type': 'RateLimitError' });
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    const [run] = named('invoke_agent trader');
    expect(run.attributes).toMatchObject({ 'error.type': 'model_error', 'zmodu.run.stopped_reason': 'model_error' });
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: 'model_error' });
    expect(parentOf(chat)).toBe(run.spanContext().spanId);
  });

  it('a model without a `provider:model` name: the provider is its name and the span is `chat`', async () => {
    app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'ok' }]))], undefined);
    await app.init();
    await app.get(AgentRegistry).get('trader').run('hi', SCOPE);
    const [chat] = named('chat');
    expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted' });
    expect(chat.attributes).not.toHaveProperty('gen_ai.request.model');
    expect(named('invoke_agent trader')[0].attributes).not.toHaveProperty('gen_ai.request.model');
  });

  it('a goal run by the worker gets its invoke_agent span, with the stored run id (the same on whichever instance claims it)', async () => {
    const results: AgentRunRecord[] = [];
    app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'queued answer' }]))], {
      runStore: 'memory',
      onResult: (r) => void results.push(r),
    });
    await app.init();
    const posted = await app.get(AgentWorker).post('quote ACME', SCOPE);
    await until(() => results.length === 1, 'the run');
    const [run] = named('invoke_agent trader');
    expect(run.attributes).toMatchObject({ 'zmodu.run.id': posted.runId, 'zmodu.tenant.id': 't1' });
    expect(named('chat').every((c) => parentOf(c) === run.spanContext().spanId)).toBe(true);
  });

  it('a dispatch outside a run (MCP, HTTP, the pipeline) is a root execute_tool span; an active span of the caller is its parent', async () => {
    app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'ok' }]))], undefined);
    await app.init();
    const dispatcher = app.get(SkillDispatcher);
    const ctx = createSkillContext({ guard: new Guard({ allow: ['market.quote'], allowExecute: false }), tenantId: 't2' });
    await dispatcher.dispatch(ctx, 'market.quote', { symbol: 'X' });
    const [root] = named('execute_tool market.quote');
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toMatchObject({ 'zmodu.run.id': ctx.runId, 'zmodu.tenant.id': 't2', 'zmodu.guard.decision': 'allowed' });
    expect(root.attributes).not.toHaveProperty('gen_ai.tool.call.id');
    expect(root.attributes).not.toHaveProperty('gen_ai.agent.name');

    exporter.reset();
    const caller = trace.getTracer('test');
    await caller.startActiveSpan('POST /mcp', async (span) => {
      await dispatcher.dispatch(ctx, 'market.quote', { symbol: 'X' });
      span.end();
    });
    const [child] = named('execute_tool market.quote');
    expect(parentOf(child)).toBe(named('POST /mcp')[0].spanContext().spanId);
  });

  it("a name the model made up is shown with its secrets redacted, then cut to 64 characters (it is the model's text)", async () => {
    const madeUp = `leak.${SECRET_SYMBOL}.${'x'.repeat(200)}`;
    app = await compileWorkerApp([spec(new ScriptedModelProvider([{ toolCalls: [{ name: madeUp }] }, { text: 'ok' }]))], undefined);
    await app.init();
    await app.get(AgentRegistry).get('trader').run('hi', SCOPE);
    const [tool] = spans().filter((s) => s.name.startsWith('execute_tool'));
    const shown = `${`leak.ACME-[redacted].${'x'.repeat(200)}`.slice(0, 63)}…`;
    expect(tool.attributes['gen_ai.tool.name']).toBe(shown);
    expect(tool.name).toBe(`execute_tool ${shown}`);
    expect(tool.attributes).toMatchObject({ 'zmodu.guard.cause': 'denied_not_listed', 'error.type': 'ToolDenied' });
  });

  it('the tracers carry the versions of their packages', () => {
    const version = (lib: string) =>
      (JSON.parse(readFileSync(join(__dirname, '..', '..', lib, 'package.json'), 'utf8')) as { version: string }).version;
    expect(AGENT_PACKAGE_VERSION).toBe(version('agent'));
    // The skills tracer's version, as a span says it.
    return (async () => {
      app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'ok' }]))], undefined);
      await app.init();
      const ctx = createSkillContext({ guard: new Guard({ allow: [], allowExecute: false }) });
      await app.get(SkillDispatcher).dispatch(ctx, 'market.quote', {});
      expect(named('execute_tool market.quote')[0].instrumentationScope).toEqual({ name: '@zmodu/skills', version: version('skills') });
    })();
  });
});
