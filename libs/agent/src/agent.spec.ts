import { InvalidGoalException } from './exceptions/invalid-goal.exception';
import { Injectable, Logger } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { AgentAuditLog, TokenQuota } from '@zmodu/guard';
import { Skill, SkillInvocation } from '@zmodu/skills';
import { AgentModule } from './agent.module';
import { AgentRegistry } from './agent.registry';
import { AgentSpec } from './agent-definition';
import { AgentRunEvent } from './agent-run';
import { lastObservation, ScriptedModelProvider } from './providers/scripted-model.provider';
import { ModelRequest } from './providers/model-provider';

@Injectable()
class TradingSkills {
  drafts: unknown[] = [];
  submits = 0;

  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'Quote',
    parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
  })
  quote(args: { symbol: string }) {
    return { symbol: args.symbol, price: 101.5 };
  }

  @Skill({
    name: 'order.draft',
    action: 'propose',
    description: 'Draft an order',
    parameters: { type: 'object', properties: { symbol: { type: 'string' }, qty: { type: 'integer' } }, required: ['symbol', 'qty'] },
  })
  draft(args: { symbol: string; qty: number }, ctx: SkillInvocation) {
    this.drafts.push({ ...args, tenant: ctx.tenantId });
    return { draftId: `d-${this.drafts.length}`, status: 'draft' };
  }

  @Skill({
    name: 'order.submit',
    description: 'Submit an order',
    parameters: { type: 'object', properties: { symbol: { type: 'string' }, qty: { type: 'integer' } }, required: ['symbol', 'qty'] },
  })
  submit() {
    this.submits++;
    return { status: 'submitted' };
  }

  slowAborted = 0;
  /** Called when market.slow starts: a test's cue to abort the run while the call runs. */
  onSlowStart: (() => void) | undefined;

  @Skill({ name: 'market.slow', action: 'read', description: 'Waits until its call is aborted', parameters: { type: 'object' } })
  slow(_args: unknown, ctx: SkillInvocation) {
    const aborted = new Promise((_resolve, reject) =>
      ctx.signal.addEventListener('abort', () => {
        this.slowAborted++;
        reject(new Error('aborted'));
      }),
    );
    this.onSlowStart?.(); // once it listens for the abort
    return aborted;
  }
}

const fallbackScript = () =>
  new ScriptedModelProvider([
    {
      text: 'Looking at the price.',
      toolCalls: [
        { name: 'market.quote', arguments: { symbol: 'ACME' } },
        { name: 'market.quote', arguments: { symbol: 'GLOBEX' } },
      ],
    },
    { toolCalls: [{ name: 'order.submit', arguments: { symbol: 'ACME', qty: 10 } }] },
    (req: ModelRequest) => {
      const obs = lastObservation(req) as { error?: string };
      return obs?.error === 'ToolDenied'
        ? { toolCalls: [{ name: 'order.draft', arguments: { symbol: 'ACME', qty: 10 } }] }
        : { text: 'submitted' };
    },
    (req: ModelRequest) => ({ text: `Drafted ${(lastObservation(req) as { draftId: string }).draftId} for review.` }),
  ]);

const trader = (over: Partial<AgentSpec> = {}): AgentSpec => ({
  name: 'trader',
  provider: fallbackScript(),
  skills: ['market.quote', 'order.draft', 'order.submit'],
  guard: { allow: ['market.quote', 'order.draft', 'order.submit'], allowExecute: false },
  systemPrompt: 'You are a trading assistant.',
  ...over,
});

async function boot(agents: AgentSpec[], strictPolicies = false): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [AgentModule.forRoot({ agents, strictPolicies, guard: { auditStore: 'memory', quotaStore: 'memory' } })],
    providers: [TradingSkills],
  }).compile();
  await app.init();
  return app;
}

describe('Agent.run', () => {
  it('turns a denied call into a ToolDenied observation and the model falls back to propose', async () => {
    const app = await boot([trader()], false);
    const agent = app.get(AgentRegistry).get('trader');
    const result = await agent.run('Buy 10 ACME', { tenantId: 't1', userId: 'alice' });

    expect(result.stoppedReason).toBe('final');
    expect(result.answer).toBe('Drafted d-1 for review.');
    expect(result.steps.map((s) => s.toolCalls.map((c) => `${c.name}:${c.decision}:${c.cause ?? ''}`))).toEqual([
      ['market.quote:allowed:', 'market.quote:allowed:'],
      ['order.submit:denied:denied_execute_class'],
      ['order.draft:allowed:'],
      [],
    ]);
    expect(JSON.parse(result.steps[1].toolCalls[0].observation)).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
    expect(app.get(TradingSkills).submits).toBe(0);
    expect(app.get(TradingSkills).drafts).toEqual([{ symbol: 'ACME', qty: 10, tenant: 't1' }]);

    expect(result.metrics).toMatchObject({ runs: 1, steps: 4, toolCalls: 4, toolDenied: { denied_execute_class: 1 }, toolDeniedTotal: 1 });
    expect(result.metrics.tokensIn).toBeGreaterThan(0);
    expect(result.metrics.tokensOut).toBeGreaterThan(0);
    expect(agent.guardStats.snapshot()).toMatchObject({ allowed: 3, denied_execute_class: 1 });

    const audit = await app.get(AgentAuditLog).query({ runId: result.runId });
    expect(audit.map((a) => [a.skill, a.decision, a.cause])).toEqual([
      ['market.quote', 'allowed', null],
      ['market.quote', 'allowed', null],
      ['order.submit', 'denied', 'denied_execute_class'],
      ['order.draft', 'allowed', null],
    ]);
    expect(audit.every((a) => a.agent === 'trader' && a.tenantId === 't1' && a.userId === 'alice')).toBe(true);
    await app.close();
  });

  it('offers the model the agent skills with their schemas', async () => {
    let seen: ModelRequest | undefined;
    const provider = new ScriptedModelProvider([(req) => ((seen = req), { text: 'done' })]);
    const app = await boot([trader({ provider, skills: (s) => s.action !== 'execute' })]);
    await app.get(AgentRegistry).get('trader').run('hi', { tenantId: 't1', userId: 'u' });
    expect(seen?.tools.map((t) => t.name).sort()).toEqual(['market.quote', 'market.slow', 'order.draft']);
    expect(seen?.system).toBe('You are a trading assistant.');
    expect(seen?.tools.find((t) => t.name === 'market.quote')?.parameters).toMatchObject({ required: ['symbol'] });
    await app.close();
  });

  it('answers arguments that are not JSON with a tool error the model can correct, a few times per run, then stops', async () => {
    const raw = { toolCalls: [{ name: 'market.quote', arguments: '{"symbol": "ACME"' }] };
    const fixed = (req: ModelRequest) => {
      const obs = lastObservation(req) as { error?: string; reason?: string };
      return obs?.error === 'InvalidArguments' && /not valid JSON/.test(String(obs.reason))
        ? { toolCalls: [{ name: 'market.quote', arguments: { symbol: 'ACME' } }] }
        : { text: '?' };
    };
    const app = await boot([trader({ provider: new ScriptedModelProvider([raw, fixed, { text: 'ACME is 10.' }]) })]);
    const corrected = await app.get(AgentRegistry).get('trader').run('quote', { tenantId: 't1', userId: 'u' });
    expect(corrected.stoppedReason).toBe('final');
    expect(corrected.steps.map((s) => s.toolCalls.map((c) => c.outcome))).toEqual([['invalid_arguments'], ['ok'], []]);
    await app.close();

    const stubborn = await boot([trader({ provider: new ScriptedModelProvider([raw, raw, raw]), maxMalformedToolCalls: 2 })]);
    const stopped = await stubborn.get(AgentRegistry).get('trader').run('quote', { tenantId: 't1', userId: 'u' });
    expect(stopped.stoppedReason).toBe('malformed_tool_calls');
    expect(stopped.error).toMatch(/not JSON 3 times \(at most 2 are answered\)/);
    expect(stopped.steps.map((s) => s.toolCalls.length)).toEqual([1, 1, 0]); // the third turn's call did not run
    await stubborn.close();
  });

  it('ends a run refused when the model refuses, and empty_answer when it answers nothing', async () => {
    const app = await boot([
      trader({ provider: new ScriptedModelProvider([{ refusal: 'I cannot help with that.' }]) }),
      trader({ name: 'mute', provider: new ScriptedModelProvider([{ text: '  ' }]) }),
    ]);
    const refused = await app.get(AgentRegistry).get('trader').run('x', { tenantId: 't1', userId: 'u' });
    expect(refused).toMatchObject({ stoppedReason: 'refused', answer: 'I cannot help with that.' });
    const empty = await app.get(AgentRegistry).get('mute').run('x', { tenantId: 't1', userId: 'u' });
    expect(empty).toMatchObject({ stoppedReason: 'empty_answer', error: expect.stringMatching(/answered nothing/) });
    await app.close();
  });

  it('stops at maxSteps', async () => {
    const loop = { toolCalls: [{ name: 'market.quote', arguments: { symbol: 'A' } }] };
    const app = await boot([trader({ provider: new ScriptedModelProvider([loop, loop, loop, loop]), maxSteps: 2 })]);
    const r = await app.get(AgentRegistry).get('trader').run('loop', { tenantId: 't1', userId: 'u' });
    expect(r.stoppedReason).toBe('max_steps');
    expect(r.steps).toHaveLength(2);
    await app.close();
  });

  it('refuses the calls past maxToolCallsPerTurn in one summary denial: counted once, audited once, one observation (attack: a compromised model sends 3,000 tool calls in one turn)', async () => {
    const calls = Array.from({ length: 3000 }, (_, i) => ({
      name: i % 2 ? 'market.quote' : `made.up_${i}`,
      arguments: { symbol: `S${i}` },
    }));
    const capped = async (over: Partial<AgentSpec>, perTurn: number) => {
      const seen: ModelRequest[] = [];
      const provider = new ScriptedModelProvider([
        { toolCalls: calls },
        (req) => (seen.push({ ...req, messages: [...req.messages] }), { text: 'done' }),
      ]);
      const app = await boot([trader({ provider, ...over })]);
      const r = await app.get(AgentRegistry).get('trader').run('flood', { tenantId: 't1', userId: 'u' });
      expect(r.stoppedReason).toBe('final');
      const [first] = r.steps;
      // The first perTurn calls, one by one; then one summary for the other 3000 - perTurn.
      expect(first.toolCalls).toHaveLength(perTurn + 1);
      const summary = first.toolCalls[perTurn];
      expect(summary).toMatchObject({ name: calls[perTurn].name, decision: 'denied', cause: 'denied_turn_cap', ok: false });
      expect(JSON.parse(summary.observation)).toEqual({
        error: 'ToolDenied',
        reason: 'denied_turn_cap',
        refused: 3000 - perTurn,
        maxToolCallsPerTurn: perTurn,
      });
      expect(first.toolCalls.slice(0, perTurn).every((c) => c.cause !== 'denied_turn_cap')).toBe(true);
      expect(r.metrics.toolDenied.denied_turn_cap).toBe(1);
      expect(r.metrics.toolCalls).toBe(perTurn + 1);
      expect(app.get(AgentRegistry).get('trader').guardStats.denied_turn_cap).toBe(1);
      const audit = await app.get(AgentAuditLog).query({ runId: r.runId, limit: 1000 });
      expect(audit).toHaveLength(perTurn + 1);
      expect(audit.filter((a) => a.cause === 'denied_turn_cap')).toMatchObject([
        { skill: calls[perTurn].name, args: { refused: 3000 - perTurn, maxToolCallsPerTurn: perTurn } },
      ]);
      // What goes back to the model: the turn's first perTurn calls and the summary's, each answered once.
      const [assistant, ...rest] = seen[0].messages.slice(1);
      expect(assistant).toMatchObject({ role: 'assistant' });
      expect(assistant.role === 'assistant' && assistant.toolCalls).toHaveLength(perTurn + 1);
      expect(rest.filter((m) => m.role === 'tool')).toHaveLength(perTurn + 1);
      expect(JSON.stringify(seen[0].messages).length).toBeLessThan(20_000);
      expect(JSON.stringify(r).length).toBeLessThan(30_000);
      await app.close();
    };
    await capped({}, 16);
    await capped({ maxToolCallsPerTurn: 3 }, 3);
    await expect(boot([trader({ maxToolCallsPerTurn: 0 })])).rejects.toThrow(/maxToolCallsPerTurn/);
  });

  it('shows, audits and sends back a made-up tool name cut to 64 characters and a bad tool-call id replaced (attack: a 100,000-character name with line breaks and ANSI escapes)', async () => {
    const hostile = `evil\n[INFO] forged line \u001b[31m\u202e${'y'.repeat(100_000)}`;
    const seen: ModelRequest[] = [];
    const provider = new ScriptedModelProvider([
      { toolCalls: [{ name: hostile, id: `id\n${'z'.repeat(10_000)}`, arguments: {} }] },
      (req) => (seen.push({ ...req, messages: [...req.messages] }), { text: 'done' }),
    ]);
    const app = await boot([trader({ provider })]);
    const r = await app.get(AgentRegistry).get('trader').run('hostile names', { tenantId: 't1', userId: 'u' });
    const [call] = r.steps[0].toolCalls;
    expect(call).toMatchObject({ id: 'zmodu_1_1', decision: 'denied', cause: 'denied_not_listed' });
    expect(Array.from(call.name)).toHaveLength(64);
    expect(call.name).toMatch(/^evil\ufffd\[INFO\] forged line \ufffd\[31m\ufffdy+…$/);
    const [entry] = await app.get(AgentAuditLog).query({ runId: r.runId });
    expect(entry.skill).toBe(call.name);
    const back = seen[0].messages.filter((m) => m.role !== 'user');
    expect(JSON.stringify(back).length).toBeLessThan(2_000);
    expect(back).toMatchObject([
      { role: 'assistant', toolCalls: [{ id: 'zmodu_1_1' }] },
      { role: 'tool', toolCallId: 'zmodu_1_1' },
    ]);
    await app.close();
  });

  it('denies tool calls past the run budget and stops the run', async () => {
    const provider = new ScriptedModelProvider([
      { toolCalls: [{ name: 'market.quote', arguments: { symbol: 'A' } }], usage: { inputTokens: 40, outputTokens: 10 } },
      { toolCalls: [{ name: 'market.quote', arguments: { symbol: 'B' } }], usage: { inputTokens: 40, outputTokens: 10 } },
      { text: 'never reached' },
    ]);
    const app = await boot([trader({ provider, budget: { tokensPerRun: 60 } })]);
    const r = await app.get(AgentRegistry).get('trader').run('go', { tenantId: 't1', userId: 'u' });
    expect(r.steps[0].toolCalls[0].decision).toBe('allowed');
    expect(r.steps[1].toolCalls[0].cause).toBe('denied_budget');
    expect(r.stoppedReason).toBe('budget_exhausted');
    expect(r.budget).toBe('run');
    expect(r.metrics.toolDenied).toEqual({ denied_budget: 1 });
    await app.close();
  });

  it('stops a user at their share of the tenant budget (budget: user) while another user of the tenant goes on', async () => {
    const turn = { toolCalls: [{ name: 'market.quote', arguments: { symbol: 'A' } }], usage: { inputTokens: 40, outputTokens: 10 } };
    const provider = new ScriptedModelProvider([turn, turn, turn, { text: 'done' }]);
    const app = await boot([trader({ provider, budget: { tokensPerPeriod: 1000, userShare: 0.1, tokensPerUserPerPeriod: 500 } })]);
    const quota = app.get(TokenQuota);
    expect(quota.userLimitFor({ tenantId: 't1', agent: 'trader', userId: 'alice' })).toBe(100);
    const r = await app.get(AgentRegistry).get('trader').run('go', { tenantId: 't1', userId: 'alice' });
    expect(r).toMatchObject({ stoppedReason: 'budget_exhausted', budget: 'user' });
    const status = await quota.check({ tenantId: 't1', agent: 'trader', userId: 'alice' });
    expect(status).toMatchObject({ allowed: false, exhausted: 'user' });
    expect(status.user?.used).toBeGreaterThanOrEqual(100);
    expect((await quota.check({ tenantId: 't1', agent: 'trader', userId: 'bob' })).allowed).toBe(true);
    await app.close();
  });

  it('stops with budget: tenant when the tenant budget is used up', async () => {
    const app = await boot([trader({ budget: { tokensPerPeriod: 50, userShare: 1 } })]);
    await app.get(TokenQuota).charge({ tenantId: 't1', agent: 'trader', userId: 'other' }, 50);
    const r = await app.get(AgentRegistry).get('trader').run('go', { tenantId: 't1', userId: 'alice' });
    expect(r).toMatchObject({ stoppedReason: 'budget_exhausted', budget: 'tenant', steps: [] });
    await app.close();
  });

  it('stops with quota_unavailable, not budget_exhausted, when the quota store throws', async () => {
    const app = await boot([trader({ budget: { tokensPerPeriod: 1000 } })]);
    const store = (app.get(TokenQuota) as unknown as { store: { used: () => Promise<number> } }).store;
    store.used = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const r = await app.get(AgentRegistry).get('trader').run('go', { tenantId: 't1', userId: 'alice' });
    expect(r.stoppedReason).toBe('quota_unavailable');
    expect(r.budget).toBeUndefined();
    expect(r.error).toMatch(/quota could not be checked/);
    expect(r.steps).toEqual([]);
    await app.close();
  });

  it('rejects a userShare outside (0, 1] and a negative tokensPerUserPerPeriod', async () => {
    await expect(boot([trader({ budget: { userShare: 0 } })])).rejects.toThrow(/userShare/);
    await expect(boot([trader({ budget: { userShare: 2 } })])).rejects.toThrow(/userShare/);
    await expect(boot([trader({ budget: { tokensPerUserPerPeriod: -1 } })])).rejects.toThrow(/tokensPerUserPerPeriod/);
  });

  it('reports a model error in the result instead of throwing', async () => {
    const provider = { name: 'broken', complete: async () => Promise.reject(new Error('503 from model')) };
    const app = await boot([trader({ provider })]);
    const r = await app.get(AgentRegistry).get('trader').run('go', { tenantId: 't1', userId: 'u' });
    expect(r).toMatchObject({ stoppedReason: 'model_error', error: '503 from model', steps: [] });
    await app.close();
  });

  it('ends a run model_error when the provider returns something that is not a turn, never throwing', async () => {
    const turns: unknown[] = [
      { text: 42, toolCalls: [] },
      { text: 'x' },
      { text: 'x', toolCalls: [{ id: 1, name: 'market.quote' }] },
      null,
    ];
    for (const turn of turns) {
      const provider = { name: 'garbage', complete: async () => turn as never };
      const app = await boot([trader({ provider })]);
      const r = await app.get(AgentRegistry).get('trader').run('go', { tenantId: 't1', userId: 'u' });
      expect(r).toMatchObject({ stoppedReason: 'model_error', steps: [], answer: '' });
      expect(r.error).toMatch(/^the model provider garbage returned a malformed turn: /);
      await app.close();
    }
  });

  it('tells a listener what happens as it happens: text deltas, a step per tool call with its guard decision, then the result', async () => {
    const app = await boot([trader()]);
    const events: AgentRunEvent[] = [];
    const result = await app
      .get(AgentRegistry)
      .get('trader')
      .run('Buy 10 ACME', { tenantId: 't1', userId: 'alice', onEvent: (e) => events.push(e) });

    expect(events.at(-1)).toEqual({ type: 'final', result });
    expect(events.filter((e) => e.type === 'final')).toHaveLength(1);
    const calls = events.flatMap((e) => (e.type === 'step' ? [[e.step, e.toolCall.name, e.toolCall.decision, e.toolCall.cause]] : []));
    expect(calls).toEqual([
      [0, 'market.quote', 'allowed', null],
      [0, 'market.quote', 'allowed', null],
      [1, 'order.submit', 'denied', 'denied_execute_class'],
      [2, 'order.draft', 'allowed', null],
    ]);
    // Each step event is the record of the result, observation included.
    const stepEvents = events.filter((e) => e.type === 'step');
    expect(stepEvents.map((e) => e.toolCall)).toEqual(result.steps.flatMap((s) => s.toolCalls));
    // The deltas of a turn add up to its text, and come before that turn's tool calls.
    for (const step of result.steps) {
      const text = events.map((e) => (e.type === 'delta' && e.step === step.index ? e.text : '')).join('');
      expect(text).toBe(step.text);
    }
    const deltas = events.filter((e) => e.type === 'delta');
    // Each turn with text streams it (short texts come whole at the turn's end: the stream holds back its last characters).
    expect(deltas.length).toBeGreaterThanOrEqual(result.steps.filter((s) => s.text).length);
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.findIndex((e) => e.type === 'delta' && e.step === 0)).toBeLessThan(events.findIndex((e) => e.type === 'step'));
    expect(
      deltas
        .filter((e) => e.step === 3)
        .map((e) => e.text)
        .join(''),
    ).toBe(result.answer);
    await app.close();
  });

  it('asks the provider to stream only when a listener is given', async () => {
    const asked: boolean[] = [];
    const provider = {
      name: 'probe',
      complete: async (req: ModelRequest) => {
        asked.push(typeof req.onTextDelta === 'function');
        req.onTextDelta?.('done');
        return { text: 'done', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const app = await boot([trader({ provider })]);
    const agent = app.get(AgentRegistry).get('trader');
    await agent.run('a', { tenantId: 't1', userId: 'u' });
    const events: AgentRunEvent[] = [];
    await agent.run('b', { tenantId: 't1', userId: 'u', onEvent: (e) => events.push(e) });
    expect(asked).toEqual([false, true]);
    expect(events.map((e) => e.type)).toEqual(['delta', 'final']);
    await app.close();
  });

  it('never streams a secret that the model splits across deltas (the turn is redacted as one text)', async () => {
    const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
    const text = `Here is the key you asked for: ${key} and nothing else.`;
    const provider = {
      name: 'splitter',
      complete: async (req: ModelRequest) => {
        // The key arrives in pieces no redactor could recognise on their own.
        for (const piece of ['Here is the key you asked for: sk-pr', 'oj-abcdefghij', 'klmnopqrstuvwxyz012345', ' and nothing else.'])
          req.onTextDelta?.(piece);
        return { text, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const app = await boot([trader({ provider })]);
    const events: AgentRunEvent[] = [];
    const result = await app
      .get(AgentRegistry)
      .get('trader')
      .run('key?', { tenantId: 't1', userId: 'u', onEvent: (e) => events.push(e) });
    const streamed = events.flatMap((e) => (e.type === 'delta' ? [e.text] : []));
    expect(streamed.join('')).toBe(result.answer);
    expect(result.answer).toBe('Here is the key you asked for: [redacted] and nothing else.');
    for (const piece of streamed)
      for (const part of ['sk-pr', 'oj-abcdefghij', 'klmnopqrstuvwxyz012345']) expect(piece).not.toContain(part);
    await app.close();
  });

  it('goes on when the listener throws or rejects, and logs that once per run', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const app = await boot([trader()]);
      const agent = app.get(AgentRegistry).get('trader');
      let calls = 0;
      const throwing = await agent.run('Buy 10 ACME', {
        tenantId: 't1',
        userId: 'alice',
        onEvent: () => {
          calls++;
          throw new Error('listener broke');
        },
      });
      expect(throwing.stoppedReason).toBe('final');
      expect(throwing.answer).toBe('Drafted d-1 for review.');
      expect(calls).toBeGreaterThan(5); // still called after it threw
      const rejecting = await agent.run('Buy 10 ACME', {
        tenantId: 't1',
        userId: 'alice',
        onEvent: (async () => Promise.reject(new Error('async listener broke'))) as unknown as (e: AgentRunEvent) => void,
      });
      expect(rejecting.stoppedReason).toBe('final');
      await new Promise((r) => setImmediate(r));
      const logged = warn.mock.calls.map((c) => String(c[0])).filter((m) => /event listener failed/.test(m));
      expect(logged).toHaveLength(2);
      expect(logged[0]).toMatch(/listener broke/);
      expect(logged[1]).toMatch(/async listener broke/);
      await app.close();
    } finally {
      warn.mockRestore();
    }
  });

  it('ends aborted when the run is aborted while the model streams', async () => {
    const controller = new AbortController();
    // Long enough that the stream releases words while the model writes (it holds back the last 64 characters).
    const words = Array.from({ length: 30 }, (_, i) => `w${String(i).padStart(2, '0')}`);
    const provider = new ScriptedModelProvider([{ text: words.join(' ') }]);
    const app = await boot([trader({ provider })]);
    const deltas: string[] = [];
    const r = await app
      .get(AgentRegistry)
      .get('trader')
      .run('x', {
        tenantId: 't1',
        userId: 'u',
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type !== 'delta') return;
          deltas.push(e.text);
          if (deltas.length === 2) controller.abort();
        },
      });
    expect(r).toMatchObject({ stoppedReason: 'aborted', steps: [] });
    expect(deltas).toEqual(['w00 ', 'w01 ']);
    await app.close();
  });

  it('ends timed_out at the run deadline, aborting the model request in flight', async () => {
    let seenAbort: unknown;
    const hanging = {
      name: 'hanging',
      complete: (req: ModelRequest) =>
        new Promise<never>((_resolve, reject) =>
          req.signal.addEventListener('abort', () => {
            seenAbort = req.signal.reason;
            reject(new Error('request aborted'));
          }),
        ),
    };
    const app = await boot([trader({ provider: hanging, runTimeoutMs: 60_000 })]);
    const agent = app.get(AgentRegistry).get('trader');
    const r = await agent.run('x', { tenantId: 't1', userId: 'u', timeoutMs: 50 });
    expect(r).toMatchObject({ stoppedReason: 'timed_out', steps: [] });
    expect(r.error).toMatch(/deadline of 50 ms/);
    expect((seenAbort as Error).name).toBe('TimeoutError');
    // The caller's own abort stays `aborted`.
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    expect(await agent.run('x', { tenantId: 't1', signal: controller.signal })).toMatchObject({ stoppedReason: 'aborted' });
    await app.close();
  });

  it('passes the deadline to the tool call running, and refuses a bad runTimeoutMs', async () => {
    // The deadline comes while market.slow waits (it waits until aborted): 1 s leaves a loaded machine room to get there.
    const app = await boot([
      trader({
        runTimeoutMs: 1000,
        skills: ['market.slow'],
        guard: { allow: ['market.slow'] },
        provider: new ScriptedModelProvider([{ toolCalls: [{ name: 'market.slow', arguments: {} }] }]),
      }),
    ]);
    const r = await app.get(AgentRegistry).get('trader').run('x', { tenantId: 't1', userId: 'u' });
    expect(r.stoppedReason).toBe('timed_out');
    expect(r.steps[0].toolCalls[0]).toMatchObject({ name: 'market.slow', ok: false });
    expect(app.get(TradingSkills).slowAborted).toBe(1);
    await expect(app.get(AgentRegistry).get('trader').run('x', { timeoutMs: 0 })).rejects.toThrow(/timeoutMs must be a whole number/);
    await app.close();
    await expect(boot([trader({ runTimeoutMs: 1.5 })])).rejects.toThrow(/runTimeoutMs/);
    await expect(boot([trader({ maxWaitMs: 0 })])).rejects.toThrow(/maxWaitMs must be a whole number/);
    await expect(boot([trader({ resumeOn: 'some' as never })])).rejects.toThrow(/resumeOn must be 'all' .* or 'each'/);
  });

  it('runs nothing for a caller whose ids only look like ids: no model turn, no charge (attack: userId lee\\u200b, tenantId \\u202e)', async () => {
    let turns = 0;
    const app = await boot([trader({ provider: new ScriptedModelProvider([() => (turns++, { text: 'done' })]) })]);
    const agent = app.get(AgentRegistry).get('trader');
    await expect(agent.run('quote ACME', { tenantId: 't1', userId: 'lee\u200b' })).rejects.toThrow(InvalidGoalException);
    await expect(agent.run('quote ACME', { tenantId: '\u202e1t', userId: 'u' })).rejects.toThrow(/tenantId holds U\+202E/);
    expect(turns).toBe(0);
    await app.close();
  });

  it('never starts a tool call after the run is over: the rest of the turn is cancelled, not run (deadline and caller abort)', async () => {
    const turn = {
      toolCalls: [
        { name: 'market.slow', arguments: {} },
        ...[1, 2].map(() => ({ name: 'order.submit', arguments: { symbol: 'ACME', qty: 1 } })),
      ],
    };
    const names = ['market.slow', 'order.submit'];
    // The deadline and the abort both come while market.slow runs: the deadline at 1 s (room for a loaded machine to
    // get there), the abort as soon as market.slow has started.
    const app = await boot([
      trader({
        runTimeoutMs: 1000,
        skills: names,
        guard: { allow: names, allowExecute: true },
        provider: new ScriptedModelProvider([turn]),
      }),
      trader({ name: 'desk', skills: names, guard: { allow: names, allowExecute: true }, provider: new ScriptedModelProvider([turn]) }),
    ]);
    const skills = app.get(TradingSkills);
    const timedOut = await app.get(AgentRegistry).get('trader').run('x', { tenantId: 't1', userId: 'u' });
    const controller = new AbortController();
    skills.onSlowStart = () => controller.abort();
    const aborted = await app.get(AgentRegistry).get('desk').run('x', { tenantId: 't1', userId: 'u', signal: controller.signal });
    for (const [r, reason] of [
      [timedOut, 'timed_out'],
      [aborted, 'aborted'],
    ] as const) {
      expect(r.stoppedReason).toBe(reason);
      expect(r.steps[0].toolCalls.map((c) => c.outcome)).toEqual(['timeout', 'cancelled', 'cancelled']);
      expect(JSON.parse(r.steps[0].toolCalls[1].observation)).toMatchObject({ error: 'Cancelled', reason: 'run_cancelled' });
    }
    expect(skills.submits).toBe(0);
    const audit = (await app.get(AgentAuditLog).query({})).filter((e) => e.skill === 'order.submit');
    expect(audit.map((e) => e.outcome)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    await app.close();
  });

  it('charges an estimate when the model reports no usage, so the run budget still holds', async () => {
    const big = 'x'.repeat(4_000);
    const silent = {
      name: 'silent',
      complete: async () => ({
        text: big,
        toolCalls: [{ id: 'c', name: 'market.quote', arguments: { symbol: 'ACME' } }],
        usage: undefined as never,
      }),
    };
    const app = await boot([trader({ provider: silent, budget: { tokensPerRun: 2_500 } })]);
    const r = await app.get(AgentRegistry).get('trader').run('x', { tenantId: 't1', userId: 'u' });
    expect(r.stoppedReason).toBe('budget_exhausted');
    // 4,000 characters of answer are at least 1,000 tokens a turn: the budget runs out within three turns, not never.
    expect(r.steps.length).toBeLessThanOrEqual(3);
    expect(r.steps[0].usage.outputTokens).toBeGreaterThanOrEqual(1_000);
    expect(r.steps[0].usage.inputTokens).toBeGreaterThan(0);
    await app.close();
  });

  it('injects memory only with both a tenant and a user', async () => {
    const systems: string[] = [];
    const provider = new ScriptedModelProvider([(req) => (systems.push(req.system), { text: 'ok' })]);
    const memory = { recallBlock: async (scope: { tenantId: string; userId: string }) => `Memory of ${scope.tenantId}/${scope.userId}` };
    const app = await boot([trader({ provider, memory })]);
    const agent = app.get(AgentRegistry).get('trader');
    await agent.run('a', { tenantId: 't1', userId: 'u1' });
    await agent.run('b', { tenantId: 't1' });
    await agent.run('c', { userId: 'u1' });
    await agent.run('d', { tenantId: '', userId: 'u1' });
    expect(systems[0]).toContain('Memory of t1/u1');
    expect(systems.slice(1).some((s) => s.includes('Memory'))).toBe(false);
    await app.close();
  });
});

describe('AgentModule', () => {
  it('refuses an agent without a guard, saying what to add', async () => {
    const spec = { ...trader(), guard: undefined } as unknown as AgentSpec;
    await expect(boot([spec])).rejects.toThrow(/trader.*has no guard policy.*add guard: \{ allow:/);
  });

  it('refuses duplicate agent names and bad specs', async () => {
    await expect(boot([trader(), trader()])).rejects.toThrow(/unique/);
    await expect(boot([trader({ maxSteps: 0 })])).rejects.toThrow(/maxSteps/);
    await expect(boot([trader({ provider: {} as never })])).rejects.toThrow(/ModelProvider/);
  });

  it('warns at boot about a blind spot, and fails boot with strictPolicies', async () => {
    const app = await boot([trader()], false);
    const health = app.get(AgentRegistry).get('trader').auditPolicy();
    expect(health).toMatchObject({ hasClassBlindSpot: true, classDeniedTools: ['order.submit'] });
    await app.close();
    await expect(boot([trader()], true)).rejects.toThrow(/Agent 'trader' policy needs attention.*order\.submit/);
    await expect(boot([trader({ guard: { allow: [], allowExecute: false } })], true)).rejects.toThrow(/inert/);
    const healthy = await boot([trader({ guard: { allow: ['market.quote', 'order.draft'], allowExecute: false } })], true);
    await healthy.close();
  });

  it('answers an unknown agent name with the list of agents', async () => {
    const app = await boot([trader()]);
    expect(() => app.get(AgentRegistry).get('nobody')).toThrow(/No agent named 'nobody'. Agents: trader/);
    await app.close();
  });

  it('supports forRootAsync', async () => {
    const app = await Test.createTestingModule({
      imports: [
        AgentModule.forRootAsync({
          useFactory: async () => ({ agents: [trader()] }),
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
      ],
      providers: [TradingSkills],
    }).compile();
    await app.init();
    expect(app.get(AgentRegistry).has('trader')).toBe(true);
    await app.close();
  });
});
