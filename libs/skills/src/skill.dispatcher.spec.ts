import { Injectable } from '@nestjs/common';
import { AgentAuditLog, Guard, TokenQuota } from '@zmodu/guard';
import { skillsTestingModule } from './__fixtures__/skills-testing-module';
import { SkillError } from './exceptions/skill.error';
import { createSkillContext, SkillInvocation, stagedExecution } from './skill-context';
import { Skill } from './skill.decorator';
import { SkillDispatcher } from './skill.dispatcher';
import { SkillRegistry } from './skill.registry';

@Injectable()
class FixtureSkills {
  calls = 0;
  lastSignal?: AbortSignal;
  slowFinished = false;

  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'Quote a symbol',
    parameters: {
      type: 'object',
      properties: { symbol: { type: 'string', minLength: 1 } },
      required: ['symbol'],
      additionalProperties: false,
    },
  })
  quote(args: { symbol: string }, ctx: SkillInvocation) {
    this.calls++;
    return { symbol: args.symbol, price: 10, tenant: ctx.tenantId };
  }

  costly = 0;

  /** Costs 10 tokens a call, and takes a moment: calls at once overlap. */
  @Skill({ name: 'costly.thing', action: 'read', description: 'Costs ten tokens', cost: 10 })
  async costlyThing() {
    this.costly++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { ok: true };
  }

  @Skill({ name: 'order.submit', description: 'Submit an order (no action declared: execute)', requiredPermission: 'order:submit' })
  submit() {
    this.calls++;
    return { submitted: true };
  }

  @Skill({ name: 'slow.thing', action: 'read', description: 'Takes too long', timeoutMs: 50 })
  async slow(_args: unknown, ctx: SkillInvocation) {
    this.lastSignal = ctx.signal;
    this.slowFinished = false;
    // It ignores its signal: the call must be answered at its deadline without waiting for it.
    await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
    this.slowFinished = true;
    return 'late';
  }

  @Skill({ name: 'public.info', action: 'read', description: 'No tenant needed', tenantScoped: false })
  info() {
    return 'info';
  }

  @Skill({ name: 'broken.thing', action: 'read', description: 'Throws' })
  broken() {
    throw new Error('database password is hunter2');
  }

  @Skill({ name: 'offline.thing', action: 'read', description: 'Its database connection is refused (a restart)' })
  offline() {
    throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432 (password hunter2)'), { code: 'ECONNREFUSED' });
  }

  @Skill({
    name: 'order.place',
    action: 'execute',
    staged: true,
    description: 'Place an order (staged: only the pipeline runs it)',
    requiredPermission: 'order:submit',
  })
  place(_args: unknown, ctx: SkillInvocation) {
    this.calls++;
    return { placed: true, proposal: ctx.staged?.proposalId ?? null };
  }

  @Skill({ name: 'picky.thing', action: 'read', description: 'Throws a reason for the model' })
  picky() {
    throw new SkillError('unknown_symbol', 'No such symbol: use market.list');
  }

  @Skill({ name: 'leaky.thing', action: 'read', description: 'Says too much in its error' })
  leaky() {
    throw new SkillError('upstream_refused', 'the broker refused key sk-live-0123456789abcdefghij', { card: '4111111111111111' });
  }
}

describe('SkillDispatcher', () => {
  let dispatcher: SkillDispatcher;
  let audit: AgentAuditLog;
  let quota: TokenQuota;
  let fixture: FixtureSkills;
  const policy = {
    allow: [
      'market.quote',
      'order.submit',
      'slow.thing',
      'public.info',
      'broken.thing',
      'offline.thing',
      'picky.thing',
      'ghost.skill',
      'order.place',
      'leaky.thing',
      'costly.thing',
    ],
    allowExecute: true,
  };
  const ctx = (over: Partial<Parameters<typeof createSkillContext>[0]> = {}) =>
    createSkillContext({ guard: new Guard(policy), tenantId: 't1', userId: 'u1', permissions: ['order:submit'], agent: 'trader', ...over });

  beforeEach(async () => {
    const moduleRef = await skillsTestingModule({ providers: [FixtureSkills], guard: { audit: { flushIntervalMs: 60_000 } } });
    await moduleRef.init();
    dispatcher = moduleRef.get(SkillDispatcher);
    audit = moduleRef.get(AgentAuditLog);
    quota = moduleRef.get(TokenQuota);
    fixture = moduleRef.get(FixtureSkills);
  });

  it('discovers decorated skills, with undeclared action as execute', () => {
    const registry = (dispatcher as unknown as { registry: SkillRegistry }).registry;
    expect(registry.get('order.submit')?.action).toBe('execute');
    expect(registry.get('market.quote')?.source).toBe('FixtureSkills.quote');
  });

  it('runs an allowed call and returns its JSON observation', async () => {
    const r = await dispatcher.dispatch(ctx(), 'market.quote', { symbol: 'ACME' });
    expect(r).toMatchObject({ ok: true, decision: 'allowed', outcome: 'ok', value: { symbol: 'ACME', price: 10, tenant: 't1' } });
    expect(JSON.parse(r.observation)).toEqual({ symbol: 'ACME', price: 10, tenant: 't1' });
  });

  it('refuses a denied call with a ToolDenied observation, no handler run, no budget spent, and an audit entry', async () => {
    const c = ctx({ guard: new Guard({ ...policy, allowExecute: false, budget: 1000 }) });
    const r = await dispatcher.dispatch(c, 'order.submit', {});
    expect(JSON.parse(r.observation)).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
    expect(fixture.calls).toBe(0);
    expect(c.guard.spent).toBe(0);
    expect(c.guard.getStats().denied_execute_class).toBe(1);
    const rows = await audit.query({ runId: c.runId });
    expect(rows).toMatchObject([
      { skill: 'order.submit', action: 'execute', decision: 'denied', cause: 'denied_execute_class', outcome: 'denied', tokens: 0 },
    ]);
  });

  it("redacts a handler's error body and a model's malformed (string) arguments, in the result and the audit entry", async () => {
    const c = ctx();
    const leaky = await dispatcher.dispatch(c, 'leaky.thing', {});
    expect(leaky.error).toEqual({
      card: '[redacted]',
      error: 'SkillFailed',
      reason: 'upstream_refused',
      message: 'the broker refused key [redacted]',
    });
    expect(leaky.observation).not.toContain('sk-live');
    const malformed = await dispatcher.dispatch(c, 'market.quote', '{"symbol": "ACME", "apiKey": "sk-live-0123456789abcdefghij"');
    expect(malformed.outcome).toBe('invalid_arguments');
    expect(malformed.arguments).toBe('{"symbol": "ACME", "apiKey": "[redacted]"');
    const rows = await audit.query({ runId: c.runId });
    expect(rows.map((r) => [r.args, r.result])).toEqual([
      [{}, leaky.error],
      ['{"symbol": "ACME", "apiKey": "[redacted]"', malformed.error],
    ]);
  });

  it('refuses an unknown name like a name missing from the allow list, even when listed', async () => {
    const c = ctx();
    const r = await dispatcher.dispatch(c, 'ghost.skill', {});
    expect(r.error).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    expect(c.guard.getStats().denied_not_listed).toBe(1);
  });

  it('refuses an unknown name as denied_not_listed also when the policy keeps execute off (not denied_execute_class)', async () => {
    const c = ctx({ guard: new Guard({ ...policy, allowExecute: false }) });
    const r = await dispatcher.dispatch(c, 'ghost.skill', {});
    expect(r.error).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });
    expect(c.guard.getStats()).toMatchObject({ denied_not_listed: 1, denied_execute_class: 0 });
    expect(await audit.query({ runId: c.runId })).toMatchObject([{ skill: 'ghost.skill', decision: 'denied', cause: 'denied_not_listed' }]);
  });

  it('refuses a staged skill to every caller but the pipeline (denied_staged); a look-alike context does not pass', async () => {
    const c = ctx({ guard: new Guard(policy) });
    const r = await dispatcher.dispatch(c, 'order.place', {});
    expect(r.error).toEqual({ error: 'ToolDenied', reason: 'denied_staged' });
    expect(c.guard.getStats().denied_staged).toBe(1);
    expect(await audit.query({ runId: c.runId })).toMatchObject([{ skill: 'order.place', cause: 'denied_staged', outcome: 'denied' }]);
    const forged = { ...ctx(), staged: { proposalId: 'p', approvers: ['me'], transaction: {} } } as never;
    expect((await dispatcher.dispatch(forged, 'order.place', {})).error).toEqual({ error: 'ToolDenied', reason: 'denied_staged' });
    expect(fixture.calls).toBe(0);
  });

  it('a staged skill the policy does not list is refused as not listed, like a name that is no skill (attack: probe which staged skills exist)', async () => {
    for (const name of ['order.place', 'no.such.skill']) {
      const c = ctx({ guard: new Guard({ allow: [], allowExecute: false }) });
      const r = await dispatcher.dispatch(c, name, {});
      expect([name, r.error]).toEqual([name, { error: 'ToolDenied', reason: 'denied_not_listed' }]);
      expect(c.guard.getStats()).toMatchObject({ denied_not_listed: 1, denied_staged: 0 });
    }
    expect(fixture.calls).toBe(0);
  });

  it('runs a staged skill for a staged context, and audits the proposal and its approvers; a staged context runs nothing else', async () => {
    const staged = stagedExecution({ proposalId: 'p-42', approvers: ['lead', 'second'], transaction: {} as never });
    const c = ctx({ staged });
    const r = await dispatcher.dispatch(c, 'order.place', {});
    expect(r).toMatchObject({ ok: true, value: { placed: true, proposal: 'p-42' } });
    const other = await dispatcher.dispatch(c, 'market.quote', { symbol: 'A' });
    expect(other.error).toEqual({ error: 'ToolDenied', reason: 'denied_staged' });
    const rows = await audit.query({ runId: c.runId });
    expect(rows[0]).toMatchObject({
      skill: 'order.place',
      decision: 'allowed',
      outcome: 'ok',
      proposalId: 'p-42',
      approvers: ['lead', 'second'],
    });
  });

  it('deny() refuses without running, counted, audited and answered like a guard denial', async () => {
    const c = ctx();
    const r = await dispatcher.deny(c, 'market.quote', { symbol: 'A' }, 'denied_turn_cap');
    expect(r).toMatchObject({ ok: false, decision: 'denied', cause: 'denied_turn_cap', tokens: 0 });
    expect(JSON.parse(r.observation)).toEqual({ error: 'ToolDenied', reason: 'denied_turn_cap' });
    expect(c.guard.getStats()).toMatchObject({ denied_turn_cap: 1, denied: 1 });
    expect(fixture.calls).toBe(0);
    expect(await audit.query({ runId: c.runId })).toMatchObject([{ skill: 'market.quote', cause: 'denied_turn_cap' }]);
  });

  it('refuses a call without the required permission', async () => {
    const r = await dispatcher.dispatch(ctx({ permissions: [] }), 'order.submit', {});
    expect(r).toMatchObject({ ok: false, decision: 'allowed', cause: 'missing_permission', outcome: 'forbidden' });
    expect(r.error).toEqual({ error: 'PermissionDenied', reason: 'missing_permission', permission: 'order:submit' });
    expect(fixture.calls).toBe(0);
  });

  it('validates arguments against the schema before the handler runs', async () => {
    const missing = await dispatcher.dispatch(ctx(), 'market.quote', {});
    expect(missing.error).toMatchObject({
      error: 'InvalidArguments',
      problems: [{ path: '/symbol', message: expect.stringContaining('required') }],
    });
    const extra = await dispatcher.dispatch(ctx(), 'market.quote', { symbol: 'A', drop: 'table' });
    expect(extra.error).toMatchObject({ problems: [{ path: '/drop', message: 'is not an accepted argument' }] });
    const notJson = await dispatcher.dispatch(ctx(), 'market.quote', '{"symbol":"A"');
    expect(notJson.error).toMatchObject({ error: 'InvalidArguments', reason: 'arguments are not valid JSON: send one JSON object' });
    const notObject = await dispatcher.dispatch(ctx(), 'market.quote', ['A']);
    expect(notObject.error).toMatchObject({ error: 'InvalidArguments', reason: 'arguments must be a JSON object' });
    expect(fixture.calls).toBe(0);
  });

  it('fails closed for a tenant-scoped skill without a tenant', async () => {
    const r = await dispatcher.dispatch(ctx({ tenantId: undefined }), 'market.quote', { symbol: 'A' });
    expect(r.error).toEqual({ error: 'TenantRequired', reason: 'tenant_scope_unavailable' });
    const ok = await dispatcher.dispatch(ctx({ tenantId: undefined }), 'public.info', {});
    expect(ok.ok).toBe(true);
  });

  it.each([
    ['a user who looks like another (attack: userId lee\u200b, separation of duties)', { userId: 'lee\u200b' }, 'userId holds U+200B'],
    ['a name reversed on screen (attack: tenantId \u202eemca)', { tenantId: '\u202eemca' }, 'tenantId holds U+202E'],
    ['an unnormalised id (attack: tenantId e\u0301quipe)', { tenantId: 'e\u0301quipe' }, 'normalization form C'],
  ])('refuses %s before anything runs, reads or charges under it, and audits it under no tenant', async (_what, ids, problem) => {
    const c = ctx(ids);
    const r = await dispatcher.dispatch(c, 'market.quote', { symbol: 'A' });
    expect(r).toMatchObject({ ok: false, decision: 'denied', cause: 'tenant_required', outcome: 'tenant_required', tokens: 0 });
    expect(r.error).toEqual({ error: 'TenantRequired', reason: 'invalid_caller_id', message: expect.stringContaining(problem) });
    expect(fixture.calls).toBe(0);
    expect(await audit.query({ runId: c.runId })).toMatchObject([{ skill: 'market.quote', tenantId: null, userId: null }]);
    await quota.flushCharges();
    expect((await quota.check({ tenantId: c.tenantId as string, agent: 'trader' })).used).toBe(0);
  });

  it('cancels a slow skill at its deadline and reports a timeout', async () => {
    const r = await dispatcher.dispatch(ctx(), 'slow.thing', {});
    // Answered while the handler (which ignores its signal for 5 s) still runs: the call did not wait for it.
    expect(fixture.slowFinished).toBe(false);
    expect(r).toMatchObject({ ok: false, outcome: 'timeout', error: { error: 'Timeout', reason: 'deadline_exceeded', timeoutMs: 50 } });
    expect(fixture.lastSignal?.aborted).toBe(true);
  });

  it('stops a call when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    const r = await dispatcher.dispatch(ctx({ signal: controller.signal }), 'slow.thing', {});
    expect(r.error).toMatchObject({ error: 'Timeout', reason: 'cancelled' });
  });

  it('hides an unexpected handler error from the model; passes a SkillError reason through', async () => {
    const r = await dispatcher.dispatch(ctx(), 'broken.thing', {});
    expect(r.observation).toBe('{"error":"SkillFailed","reason":"internal_error"}');
    expect(r.observation).not.toContain('hunter2');
    const p = await dispatcher.dispatch(ctx(), 'picky.thing', {});
    expect(p.error).toMatchObject({ error: 'SkillFailed', reason: 'unknown_symbol', message: 'No such symbol: use market.list' });
  });

  it('tells a skill that lost its database as such (retryable), without the driver text', async () => {
    const r = await dispatcher.dispatch(ctx(), 'offline.thing', {});
    expect(r).toMatchObject({ ok: false, outcome: 'error' });
    expect(r.error).toEqual({
      error: 'SkillFailed',
      reason: 'database_unavailable',
      message: 'The database could not be reached while this call ran. Try again later.',
      retryable: true,
    });
    expect(r.observation).not.toContain('hunter2');
    expect(r.observation).not.toContain('10.0.0.7');
  });

  it('refuses with denied_budget when the persistent quota is used up, without running or charging', async () => {
    quota.setAgentLimit('trader', 5);
    await quota.charge({ tenantId: 't1', agent: 'trader' }, 5);
    const c = ctx();
    const r = await dispatcher.dispatch(c, 'market.quote', { symbol: 'A' });
    expect(r.error).toEqual({ error: 'ToolDenied', reason: 'denied_budget' });
    expect(c.guard.getStats().denied_budget).toBe(1);
    expect(fixture.calls).toBe(0);
    expect((await quota.check({ tenantId: 't1', agent: 'trader' })).used).toBe(5);
  });

  it('refuses with denied_budget naming the user budget when the user used up their share', async () => {
    quota.setAgentLimit('trader', 1000);
    quota.setAgentUserShare('trader', { userShare: 0.1 });
    await quota.charge({ tenantId: 't1', agent: 'trader', userId: 'u1' }, 100);
    const r = await dispatcher.dispatch(ctx(), 'market.quote', { symbol: 'A' });
    expect(r).toMatchObject({ decision: 'denied', cause: 'denied_budget', budget: 'user' });
    expect(fixture.calls).toBe(0);
    const other = await dispatcher.dispatch(ctx({ userId: 'u2' }), 'market.quote', { symbol: 'A' });
    expect(other.ok).toBe(true);
    // The call of u2 was charged to the tenant and to u2.
    expect((await quota.check({ tenantId: 't1', agent: 'trader', userId: 'u2' })).user?.used).toBe(other.tokens);
    expect((await quota.check({ tenantId: 't1', agent: 'trader' })).used).toBe(100 + other.tokens);
  });

  it('lets 10 of 60 calls at once through a budget with room for 10, and charges each once (attack: check the quota, then charge after the call)', async () => {
    quota.setAgentLimit('trader', 100);
    const c = ctx({ guard: new Guard({ ...policy, budget: 1_000_000 }) });
    const results = await Promise.all(Array.from({ length: 60 }, () => dispatcher.dispatch(c, 'costly.thing', {})));
    const ran = results.filter((r) => r.ok);
    expect(ran).toHaveLength(10);
    expect(fixture.costly).toBe(10);
    for (const r of results.filter((x) => !x.ok)) expect(r).toMatchObject({ cause: 'denied_budget', budget: 'tenant' });
    // What was charged: each call that ran, once: its reserved cost (10) and the rest of its tokens after it.
    const used = (await quota.check({ tenantId: 't1', agent: 'trader' })).used;
    expect(used).toBe(ran.reduce((n, r) => n + Math.max(r.tokens, 10), 0));
  });

  it('refuses with its own cause quota_unavailable when the quota store throws, and audits it as an error', async () => {
    const q = quota as unknown as { store: { used: () => Promise<number>; admit: () => Promise<never> } };
    quota.setAgentLimit('trader', 1000);
    q.store.used = () => Promise.reject(new Error('connect ECONNREFUSED'));
    q.store.admit = () => Promise.reject(new Error('connect ECONNREFUSED')); // the check with the call's cost: an atomic admission
    const c = ctx();
    const r = await dispatcher.dispatch(c, 'market.quote', { symbol: 'A' });
    expect(r).toMatchObject({ ok: false, decision: 'denied', cause: 'quota_unavailable', outcome: 'error' });
    expect(JSON.parse(r.observation)).toEqual({ error: 'ToolDenied', reason: 'quota_unavailable' });
    expect(fixture.calls).toBe(0);
    expect(c.guard.getStats().denied_budget).toBe(0);
    const rows = await audit.query({ runId: c.runId });
    expect(rows).toMatchObject([{ decision: 'denied', cause: 'quota_unavailable', outcome: 'error', tokens: 0 }]);
  });

  it('meters allowed calls into the quota and audits every call', async () => {
    const c = ctx();
    const r = await dispatcher.dispatch(c, 'market.quote', { symbol: 'ACME' });
    expect(r.tokens).toBeGreaterThan(0);
    quota.setAgentLimit('trader', 1_000_000);
    expect((await quota.check({ tenantId: 't1', agent: 'trader' })).used).toBe(r.tokens);
    await dispatcher.dispatch(c, 'nope', {});
    const rows = await audit.query({ runId: c.runId });
    expect(rows.map((x) => [x.skill, x.decision, x.outcome])).toEqual([
      ['market.quote', 'allowed', 'ok'],
      ['nope', 'denied', 'denied'],
    ]);
  });

  it('throws a clear error for a context without a guard', async () => {
    await expect(dispatcher.dispatch({ permissions: [], runId: 'r' } as never, 'market.quote', {})).rejects.toThrow(
      /needs a SkillContext with a guard/,
    );
  });
});
