import { Global, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { PROPOSAL_OUTCOMES, ProposalOutcomes } from '@zmodu/guard/internal';
import { AgentWorkerModule } from './agent-worker.module';
import { DataSourceMissingException } from '@zmodu/guard';
import { AgentModule } from '../agent.module';
import { InvalidAgentSpecException } from '../exceptions/invalid-agent-spec.exception';
import { InvalidGoalException } from '../exceptions/invalid-goal.exception';
import { MailboxFullException } from '../exceptions/mailbox-full.exception';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { compileWorkerApp, GatedModel, SCOPE, spec, until, WorkerSkills } from './__fixtures__/worker-fixtures';
import { AgentRegistry } from '../agent.registry';
import { AgentWorker } from './agent-worker';
import { InMemoryAgentRunStore } from './in-memory-agent-run.store';
import { AgentRunRecord } from './worker.ports';
import type { ModelRequest } from '../providers/model-provider';

describe('AgentWorker (in-process, memory run store)', () => {
  let app: TestingModule | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot(...args: Parameters<typeof compileWorkerApp>): Promise<AgentWorker> {
    app = await compileWorkerApp(...args);
    await app.init();
    return app.get(AgentWorker);
  }

  it('bounds the mailbox: past mailboxSize waiting goals post throws MailboxFullException at once, then all posted goals run', async () => {
    const model = new GatedModel('quoted');
    const results: AgentRunRecord[] = [];
    const worker = await boot([spec(model)], {
      runStore: 'memory',
      concurrency: 1,
      mailboxSize: 2,
      mailboxPerTenant: 2, // one tenant here: the whole mailbox is its share
      onResult: (r) => void results.push(r),
    });
    const first = await worker.post('quote ACME', SCOPE);
    await until(() => model.started === 1, 'the first run to hold the slot');
    await worker.post('quote GLOBEX', SCOPE);
    await worker.post('quote INITECH', SCOPE);
    expect(worker.stats()).toMatchObject({ queued: 2, running: 1 });
    const refused = await worker.post('one too many', SCOPE).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MailboxFullException);
    expect((refused as MailboxFullException).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((refused as MailboxFullException).message).toMatch(/mailboxSize/);
    expect(worker.stats().rejected).toBe(1);
    expect(await worker.get('t1', first.runId)).toMatchObject({ status: 'running', attempts: 1 });

    model.open();
    await until(() => results.length === 3, 'three results');
    expect(results.map((r) => r.goal)).toEqual(['quote ACME', 'quote GLOBEX', 'quote INITECH']);
    expect(results.every((r) => r.status === 'succeeded' && r.answer === 'quoted')).toBe(true);
    expect(worker.stats()).toEqual({
      queued: 0,
      running: 0,
      succeeded: 3,
      failed: 0,
      interrupted: 0,
      rejected: 1,
      handlerErrors: 0,
      waiting: 0,
      resumed: 0,
      unhandledRejections: { contained: 0, raised: 0 },
    });
    expect(await worker.get('t1', first.runId)).toMatchObject({ status: 'succeeded', answer: 'quoted', tenantId: 't1', userId: 'alice' });
  });

  it('counts goals posted before the start in the mailbox bound, and runs them at the start', async () => {
    const results: AgentRunRecord[] = [];
    app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'ok' }]))], {
      runStore: 'memory',
      mailboxSize: 2,
      mailboxPerTenant: 2,
      onResult: (r) => void results.push(r),
    });
    const worker = app.get(AgentWorker); // not started yet (no init)
    await worker.post('quote ACME', SCOPE);
    await worker.post('quote GLOBEX', SCOPE);
    expect(worker.stats().queued).toBe(2);
    await expect(worker.post('one too many', SCOPE)).rejects.toBeInstanceOf(MailboxFullException);
    await app.init();
    await until(() => results.length === 2, 'the two goals posted before the start');
    expect(worker.stats()).toMatchObject({ queued: 0, succeeded: 2, rejected: 1 });
  });

  it('reports a failing model, a throwing skill and a throwing run as results, never as handler errors', async () => {
    const results = new Map<string, AgentRunRecord>();
    const failing = {
      name: 'failing',
      complete: async () => {
        throw new Error('model endpoint returned 500');
      },
    };
    const throwingSkill = new ScriptedModelProvider([
      { toolCalls: [{ name: 'market.broken', arguments: {} }] },
      { text: 'The feed is down.' },
    ]);
    const crashing = new ScriptedModelProvider([{ text: 'unused' }]);
    const worker = await boot(
      [spec(failing, { name: 'failing' }), spec(throwingSkill, { name: 'skill' }), spec(crashing, { name: 'crashing' })],
      { runStore: 'memory', onResult: (r) => void results.set(r.agent, r) },
    );
    // Agent.run itself throwing (a fault of the runtime, not of the model): still a failed result.
    const registry = app!.get(AgentRegistry);
    registry.get('crashing').run = async () => {
      throw new Error('runtime fault');
    };
    for (const agent of ['failing', 'skill', 'crashing']) await worker.post('quote ACME', { ...SCOPE, agent });
    await until(() => results.size === 3, 'three results');

    expect(results.get('failing')).toMatchObject({ status: 'failed', stoppedReason: 'model_error' });
    expect(results.get('failing')?.error).toMatch(/500/);
    expect(results.get('skill')).toMatchObject({ status: 'succeeded', answer: 'The feed is down.' });
    expect(results.get('skill')?.steps[0].toolCalls[0].observation).toMatch(/error/i);
    expect(results.get('crashing')).toMatchObject({ status: 'failed', stoppedReason: null, error: 'The run threw: runtime fault' });
    expect(worker.stats()).toMatchObject({ succeeded: 1, failed: 2, handlerErrors: 0, running: 0 });
  });

  it('delivers results to onResult listeners until they unsubscribe; a throwing listener is counted, not fatal', async () => {
    const fromOptions: string[] = [];
    const worker = await boot([spec(new ScriptedModelProvider([{ text: 'ok' }]))], {
      runStore: 'memory',
      onResult: () => {
        throw new Error('listener bug');
      },
    });
    const seen: string[] = [];
    const off = worker.onResult((r) => void seen.push(r.id));
    worker.onResult((r) => void fromOptions.push(r.id));
    const a = await worker.post('first', SCOPE);
    await until(() => seen.length === 1, 'the first result');
    off();
    const b = await worker.post('second', SCOPE);
    await until(() => fromOptions.length === 2, 'the second result');
    expect(seen).toEqual([a.runId]);
    expect(fromOptions).toEqual([a.runId, b.runId]);
    expect(worker.stats()).toMatchObject({ succeeded: 2, handlerErrors: 2 });
    expect(() => worker.onResult('nope' as never)).toThrow(TypeError);
  });

  it('keeps runs to their tenant and refuses goals it cannot run', async () => {
    const worker = await boot([spec(new ScriptedModelProvider([{ text: 'ok' }])), spec(new GatedModel(), { name: 'other' })], {
      runStore: 'memory',
      maxGoalLength: 20,
    });
    const { runId } = await worker.post('quote ACME', { ...SCOPE, agent: 'trader' });
    await until(async () => (await worker.get('t1', runId))?.status === 'succeeded', 'the run');
    expect(await worker.get('t2', runId)).toBeNull();
    expect(await worker.get('', runId)).toBeNull();

    const refusals: [string, Promise<unknown>][] = [
      ['tenantId', worker.post('x', { ...SCOPE, agent: 'trader', tenantId: '' })],
      ['userId', worker.post('x', { ...SCOPE, agent: 'trader', userId: ' ' })],
      ['empty', worker.post('  ', { ...SCOPE, agent: 'trader' })],
      ['maxGoalLength', worker.post('x'.repeat(21), { ...SCOPE, agent: 'trader' })],
      ["no agent named 'ghost'", worker.post('x', { ...SCOPE, agent: 'ghost' })],
      ['name the agent', worker.post('x', SCOPE)],
    ];
    for (const [text, post] of refusals) {
      const err = await post.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidGoalException);
      expect((err as Error).message).toContain(text);
    }
  });

  it('keeps the lease of a run longer than leaseMs with its heartbeat, so no sweep takes it over', async () => {
    const store = new InMemoryAgentRunStore();
    const model = new GatedModel('slow but fine');
    // A lease of 2 s renewed every 50 ms: a loaded machine's late timers do not fence the run (that takes a renewal
    // 1.95 s late); the run outlasts its lease a little more than once.
    const worker = await boot([spec(model)], { runStore: store, leaseMs: 2000, heartbeatMs: 50 });
    const { runId } = await worker.post('quote ACME', SCOPE);
    await until(() => model.started === 1, 'the run to start');
    await new Promise((r) => setTimeout(r, 2500));
    expect(await store.recoverable(10, { outageMs: 10_000, graceMs: 10_000 })).toEqual({ interrupted: [], queued: [] });
    model.open();
    await until(() => worker.stats().succeeded === 1, 'the run to finish');
    expect(await store.get('t1', runId)).toMatchObject({ status: 'succeeded', attempts: 1, answer: 'slow but fine' });
    expect(worker.stats()).toMatchObject({ interrupted: 0, handlerErrors: 0 });
  });

  it('stops a run whose lease it lost (the heartbeat says so) without writing its outcome', async () => {
    const store = new InMemoryAgentRunStore();
    const model = new GatedModel();
    // The lease is the test's to take over: long enough that the worker's own fence (a renewal late by leaseMs -
    // heartbeatMs) cannot stop the run first on a loaded machine; the heartbeat, every 20 ms, finds it lost.
    const worker = await boot([spec(model)], { runStore: store, leaseMs: 10_000, heartbeatMs: 20 });
    const { runId } = await worker.post('quote ACME', SCOPE);
    await until(() => model.started === 1, 'the run to start');
    // Another instance took it over after an expired lease: this one no longer holds it.
    expect(await store.release({ runId, owner: worker.instanceId, attempt: 1 }, 'taken over')).toBe(true);
    expect(await store.claim(runId, 'other-instance', 60_000)).not.toBeNull();
    await until(() => worker.stats().interrupted === 1, 'the lost lease to stop the run');
    expect(worker.stats()).toMatchObject({ running: 0, succeeded: 0, failed: 0, handlerErrors: 0 });
    expect(await store.get('t1', runId)).toMatchObject({ status: 'running', leaseOwner: 'other-instance', answer: null });
  });

  /** A memory store whose next `n` calls of `method` fail the way a restarted PostgreSQL does (the connection refused). */
  function failing(store: InMemoryAgentRunStore, method: 'finish' | 'claim', n: number): { failures: () => number } {
    let failures = 0;
    const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
    (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      if (failures < n) {
        failures++;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      }
      return original(...args);
    };
    return { failures: () => failures };
  }

  it('stores the outcome of a finished run once the database answers again, without running the goal twice', async () => {
    const store = new InMemoryAgentRunStore();
    const lost = failing(store, 'finish', 3);
    let completions = 0;
    const counting = new ScriptedModelProvider([() => (completions++, { text: 'done once' })]);
    const results: AgentRunRecord[] = [];
    const worker = await boot([spec(counting)], { runStore: store, leaseMs: 60_000, onResult: (r) => void results.push(r) });
    const { runId } = await worker.post('quote ACME', SCOPE);
    await until(() => results.length === 1, 'the outcome to be stored after the outage');
    expect(lost.failures()).toBe(3);
    expect(completions).toBe(1);
    expect(results[0]).toMatchObject({ id: runId, status: 'succeeded', answer: 'done once' });
    expect(await store.get('t1', runId)).toMatchObject({ status: 'succeeded', attempts: 1, answer: 'done once' });
    expect(worker.stats()).toMatchObject({ succeeded: 1, interrupted: 0, handlerErrors: 0 });
  });

  it('reports a run whose outcome committed though its answer was lost, once (attack: the restart cut the connection after COMMIT)', async () => {
    const store = new InMemoryAgentRunStore();
    const finish = store.finish.bind(store);
    let cut = 0;
    store.finish = async (lease, outcome) => {
      const written = await finish(lease, outcome);
      if (cut++ === 0) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
      return written;
    };
    const results: AgentRunRecord[] = [];
    const worker = await boot([spec(new ScriptedModelProvider([{ text: 'done once' }]))], {
      runStore: store,
      onResult: (r) => void results.push(r),
    });
    const { runId } = await worker.post('quote ACME', SCOPE);
    await until(() => results.length === 1, 'the result, reported');
    expect(results[0]).toMatchObject({ id: runId, status: 'succeeded', answer: 'done once', attempts: 1 });
    expect(worker.stats()).toMatchObject({ succeeded: 1, interrupted: 0 });
  });

  it('runs a goal whose claim failed (the database away) within seconds of its return, not a lease period later', async () => {
    const store = new InMemoryAgentRunStore();
    const lost = failing(store, 'claim', 2);
    const results: AgentRunRecord[] = [];
    const worker = await boot([spec(new ScriptedModelProvider([{ text: 'claimed later' }]))], {
      runStore: store,
      leaseMs: 600_000, // the regular sweep would come ten minutes later
      onResult: (r) => void results.push(r),
    });
    const { runId } = await worker.post('quote ACME', SCOPE);
    await until(() => results.length === 1, 'the run after its failed claims', 5000);
    expect(lost.failures()).toBe(2);
    expect(results[0]).toMatchObject({ id: runId, status: 'succeeded', answer: 'claimed later', attempts: 1 });
    expect(worker.stats()).toMatchObject({ succeeded: 1, handlerErrors: 2 });
  });

  it('never takes back, in its own sweep, a run that ended here while the database was away longer than its lease', async () => {
    // The outage outlasts the lease; when the database answers again the worker's own recovery comes before its
    // heartbeat and before the outcome's next try (their connections are slow): it must not reap the run it still
    // holds and run its goal a second time.
    const store = new InMemoryAgentRunStore();
    let down = false;
    let back = false; // the database answers again after the outage
    let swept: () => void = () => undefined;
    const sweptOnce = new Promise<void>((r) => (swept = r));
    const wrap = (method: 'finish' | 'heartbeat' | 'recoverable' | 'claim', after?: () => Promise<unknown> | undefined) => {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        await after?.();
        const out = await original(...args);
        if (method === 'recoverable' && back) swept();
        return out;
      };
    };
    wrap('finish', () => (back ? sweptOnce : undefined));
    wrap('heartbeat', () => (back ? new Promise((r) => setTimeout(r, 1000)) : undefined));
    wrap('recoverable');
    wrap('claim');
    const model = new GatedModel('done once');
    const worker = await boot([spec(model)], { runStore: store, leaseMs: 300 });
    const { runId } = await worker.post('quote ACME', SCOPE);
    await until(() => model.started === 1, 'the run to start');
    down = true;
    model.open();
    await new Promise((r) => setTimeout(r, 700)); // the lease (300 ms) lapses while the database is away
    [down, back] = [false, true];
    await until(async () => (await store.get('t1', runId))?.status === 'succeeded', 'the outcome to be stored', 8000);
    expect(model.started).toBe(1);
    expect(await store.get('t1', runId)).toMatchObject({ status: 'succeeded', attempts: 1, answer: 'done once' });
    expect(worker.stats()).toMatchObject({ succeeded: 1, interrupted: 0 });
  });

  it('recovers soon only when the store lost its database: a claim failing for another reason waits for the sweep', async () => {
    const store = new InMemoryAgentRunStore();
    let claims = 0;
    store.claim = async () => {
      claims++;
      throw new Error('a bug in the run store'); // not a lost database: retrying at once cannot help
    };
    const worker = await boot([spec(new ScriptedModelProvider([{ text: 'never' }]))], { runStore: store, leaseMs: 600_000 });
    await worker.post('quote ACME', SCOPE);
    await new Promise((r) => setTimeout(r, 1800));
    expect(claims).toBe(1);
    expect(worker.stats()).toMatchObject({ running: 0, succeeded: 0, handlerErrors: 1 });
  });

  it('takes up, at start, runs of an instance that died (lease expired), until maxAttempts', async () => {
    const store = new InMemoryAgentRunStore();
    const base = { tenantId: 't1', userId: 'alice', permissions: [], agent: 'trader', goal: 'quote ACME' };
    await store.insert([
      { ...base, id: 'orphan', maxAttempts: 3 },
      { ...base, id: 'spent', maxAttempts: 1 },
    ]);
    await store.claim('orphan', 'dead-instance', 1);
    await store.claim('spent', 'dead-instance', 1);
    await new Promise((r) => setTimeout(r, 10));
    const results: AgentRunRecord[] = [];
    const worker = await boot([spec(new ScriptedModelProvider([{ text: 'recovered' }]))], {
      runStore: store,
      onResult: (r) => void results.push(r),
    });
    await until(() => results.length === 2, 'the orphaned run and the spent one');
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(byId.get('orphan')).toMatchObject({ status: 'succeeded', attempts: 2, answer: 'recovered' });
    // The spent run is reported as a failed result too (onResult and stats), not only stored as failed.
    expect(byId.get('spent')).toMatchObject({ status: 'failed', attempts: 1 });
    expect(byId.get('spent')?.error).toMatch(/maxAttempts/);
    expect((await store.get('t1', 'spent'))?.status).toBe('failed');
    expect(worker.stats()).toMatchObject({ succeeded: 1, failed: 1, handlerErrors: 0 });
  });

  it('replays the journal of a run whose instance died: finished turns are not asked again, finished calls not run again', async () => {
    const store = new InMemoryAgentRunStore();
    await store.insert([
      { id: 'orphan', tenantId: 't1', userId: 'alice', permissions: [], agent: 'trader', goal: 'quote ACME', maxAttempts: 3 },
    ]);
    await store.claim('orphan', 'dead-instance', 1);
    const dead = { runId: 'orphan', owner: 'dead-instance', attempt: 1 };
    // What the dead instance had journaled: its first turn (a quote) and the quote's outcome (99, not what the skill says now).
    const call = { id: 'call_1_1', name: 'market.quote', arguments: { symbol: 'ACME' } };
    expect(
      await store.appendJournal(dead, [
        {
          kind: 'turn',
          seq: 0,
          step: 0,
          requestDigest: 'f'.repeat(64),
          turn: { text: '', toolCalls: [call], usage: { inputTokens: 5, outputTokens: 5 } },
        },
      ]),
    ).toBe(true);
    const record = {
      ...call,
      decision: 'allowed' as const,
      cause: null,
      outcome: 'ok',
      ok: true,
      observation: '{"symbol":"ACME","price":99}',
      durationMs: 1,
    };
    expect(await store.appendJournal(dead, [{ kind: 'call', seq: 1, step: 0, call: 0, record, spent: 3 }])).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    const asked: ModelRequest[] = [];
    const model = new ScriptedModelProvider([
      { toolCalls: [{ name: 'market.quote', arguments: { symbol: 'ACME' } }] },
      (request) => {
        asked.push(request);
        return { text: `quoted ${String(request.messages.at(-1)?.content)}` };
      },
    ]);
    const results: AgentRunRecord[] = [];
    await boot([spec(model)], { runStore: store, onResult: (r) => void results.push(r) });
    await until(() => results.length === 1, 'the orphaned run');
    // One model turn asked (the second): the first came from the journal, and so did the quote it saw.
    expect(asked).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'succeeded', attempts: 2, answer: 'quoted {"symbol":"ACME","price":99}' });
    expect(results[0].steps.map((s) => s.toolCalls.map((c) => c.observation))).toEqual([['{"symbol":"ACME","price":99}'], []]);
    // The journal goes on after the dead instance's entries: the second turn, written by this attempt.
    const journal = await store.readJournal('t1', 'orphan');
    expect(journal.map((e) => [e.seq, e.kind, e.step])).toEqual([
      [0, 'turn', 0],
      [1, 'call', 0],
      [2, 'turn', 1],
    ]);
  });

  /** A model whose turns wait for `open()` (each then answers at once), recording the goals in the order they started. */
  class OrderedModel extends GatedModel {
    readonly goals: string[] = [];
    override async complete(request: Parameters<GatedModel['complete']>[0]) {
      this.goals.push(String(request.messages.find((m) => m.role === 'user')?.content));
      return super.complete(request);
    }
  }

  it('runs a dead instance’s run before newer goals, even with the mailbox full of them (attack: recovery queued behind new work)', async () => {
    const store = new InMemoryAgentRunStore();
    const model = new OrderedModel();
    const worker = await boot([spec(model)], {
      runStore: store,
      concurrency: 1,
      mailboxSize: 5,
      mailboxPerTenant: 5,
      // The run holding the slot waits for the test: its lease (1.5 s, renewed every 100 ms) is fenced only by a renewal
      // 1.4 s late, not by a loaded machine's late timer. The sweep runs every leaseMs.
      leaseMs: 1500,
      heartbeatMs: 100,
    });
    await worker.post('holding the slot', SCOPE);
    await until(() => model.started === 1, 'the slot to be held');
    for (let i = 1; i <= 5; i++) await worker.post(`newer ${i}`, SCOPE);
    expect(worker.stats().queued).toBe(5); // the mailbox is full of newer goals
    // A run of an instance that died: claimed there, its lease lapses; this worker's sweep takes it back.
    await store.insert([{ id: 'of-a-dead-instance', agent: 'trader', goal: 'recovered', maxAttempts: 3, ...SCOPE }]);
    expect(await store.claim('of-a-dead-instance', 'dead-instance', 50)).not.toBeNull();
    await until(async () => (await store.get('t1', 'of-a-dead-instance'))?.status === 'interrupted', 'the sweep to take it back', 10_000);
    await until(() => worker.stats().queued === 6, 'the recovered run to wait here');
    model.open();
    await until(() => worker.stats().succeeded === 7, 'every run');
    expect(model.goals).toEqual(['holding the slot', 'recovered', 'newer 1', 'newer 2', 'newer 3', 'newer 4', 'newer 5']);
  });

  it('computes Retry-After from how fast the mailbox drains, not from its length (attack: Retry-After 383 s)', async () => {
    const model = {
      name: 'steady',
      async complete() {
        await new Promise((r) => setTimeout(r, 150));
        return { text: 'quick', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const worker = await boot([spec(model)], {
      runStore: 'memory',
      concurrency: 2,
      mailboxSize: 60,
      mailboxPerTenant: 60,
      shutdownGraceMs: 0,
    });
    // Runs of 150 ms on 2 slots drain about 13 goals a second. A full mailbox of 60 once took 60 / 2 x 150 ms = 5 s.
    let refused: unknown;
    for (let i = 0; i < 200 && !refused; i++)
      refused = await worker.post(`goal ${i}`, SCOPE).then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(MailboxFullException);
    const retryAfter = (refused as MailboxFullException).retryAfterSeconds;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2); // one run's start frees a place: well under a second at this rate, rounded up
  });

  it('answers the upper bound of Retry-After (60 s) for a mailbox that has not drained at all', async () => {
    app = await compileWorkerApp([spec(new GatedModel())], { runStore: 'memory', mailboxSize: 2, mailboxPerTenant: 2 });
    const worker = app.get(AgentWorker); // not started: nothing drains
    await worker.post('one', SCOPE);
    await worker.post('two', SCOPE);
    const refused = await worker.post('three', SCOPE).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MailboxFullException);
    expect((refused as MailboxFullException).retryAfterSeconds).toBe(60);
  });

  it('gives each tenant its share of the mailbox: a flood of 50 posts from one leaves room for another (attack: one tenant fills the mailbox)', async () => {
    const worker = await boot([spec(new GatedModel())], { runStore: 'memory', concurrency: 1, mailboxSize: 100, shutdownGraceMs: 0 });
    // mailboxPerTenant defaults to a quarter of mailboxSize: 25 (the slot's running goal is not waiting).
    const flood = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => worker.post(`flood ${i}`, { ...SCOPE, tenantId: 'loud' })));
    const accepted = flood.filter((r) => r.status === 'fulfilled');
    const refusals = flood.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(accepted.length).toBeGreaterThanOrEqual(25);
    expect(accepted.length).toBeLessThanOrEqual(26); // 25 waiting, and perhaps one the slot took first
    expect(refusals.every((e) => e instanceof MailboxFullException && e.tenantShare === 25)).toBe(true);
    expect((refusals[0] as Error).message).toMatch(/mailboxPerTenant/);
    expect(await worker.post('quiet first goal', { ...SCOPE, tenantId: 'quiet' })).toEqual({ runId: expect.any(String) });
    expect(worker.stats().rejected).toBe(refusals.length);
  });

  it.each([
    ['worker', { runStore: 'memory' }, 'AgentWorkerModule.forRoot'],
    ['queue', { driver: 'pg-boss' }, 'AgentWorkerModule.forRoot({ queue })'],
    ['jobs', { store: 'memory' }, 'AgentJobsModule.forRoot'],
  ])(
    'refuses AgentModule.forRoot({ %s }) at boot, naming the module it moved to (it would be dropped without a word)',
    async (key, value, moved) => {
      const boot = Test.createTestingModule({
        imports: [
          AgentModule.forRoot({
            agents: [spec(new GatedModel())],
            [key]: value,
            guard: { auditStore: 'memory', quotaStore: 'memory' },
          } as never),
        ],
        providers: [WorkerSkills],
      }).compile();
      await expect(boot).rejects.toThrow(InvalidAgentSpecException);
      await expect(boot).rejects.toThrow(moved);
    },
  );

  it('is not injectable without AgentWorkerModule', async () => {
    app = await Test.createTestingModule({
      imports: [AgentModule.forRoot({ agents: [spec(new GatedModel())], guard: { auditStore: 'memory', quotaStore: 'memory' } })],
      providers: [WorkerSkills],
    }).compile();
    expect(() => app!.get(AgentWorker, { strict: false })).toThrow();
    expect(
      app
        .get(AgentRegistry)
        .list()
        .map((a) => a.name),
    ).toEqual(['trader']);
  });

  it.each([
    [{ concurrency: 0 }, 'worker.concurrency'],
    [{ mailboxSize: 1.5 }, 'worker.mailboxSize'],
    [{ leaseMs: 1000, heartbeatMs: 1000 }, 'worker.heartbeatMs'],
    [{ maxAttempts: '3' }, 'worker.maxAttempts'],
    [{ runStore: 'redis' }, 'worker.runStore'],
    [{ runStore: 'memory', onResult: 'log' }, 'worker.onResult'],
  ])('fails the boot on bad worker options: %j names %s', async (worker, field) => {
    await expect(compileWorkerApp([spec(new GatedModel())], { runStore: 'memory', ...worker } as never)).rejects.toThrow(field);
  });

  it("fails the boot with 'typeorm' and no DataSource, saying what to do", async () => {
    const booting = compileWorkerApp([spec(new GatedModel())], {});
    await expect(booting).rejects.toThrow(DataSourceMissingException);
    await expect(booting).rejects.toThrow(/AgentWorkerModule\.forRoot\(\{ runStore \}\).*TypeOrmModule\.forRoot.*zmoduMigrations\(\)/);
  });
});

describe('AgentWorker: the sweep of waiting runs goes round all of them', () => {
  let app: TestingModule | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('resumes a decided run that is neither among the 500 whose wait ends first nor on the first page by id (no event told of it)', async () => {
    const store = new InMemoryAgentRunStore();
    const target = 'zz-target';
    const ids = [...Array.from({ length: 500 }, (_, i) => `r-${String(i).padStart(3, '0')}`), target];
    await store.insert(ids.map((id) => ({ id, agent: 'trader', goal: 'quote', ...SCOPE, maxAttempts: 3 })));
    for (const id of ids) {
      await store.claim(id, 'gone', 60_000);
      const waitMs = id === target ? 10 * 86_400_000 : 86_400_000;
      await store.suspend(
        { runId: id, owner: 'gone', attempt: 1 },
        { proposalIds: [`p-${id}`], waitMs, answer: null, steps: [], pendingApprovals: [] },
      );
    }
    const read = new Set<string>();
    const outcomes: ProposalOutcomes = {
      outcomes: async (_tenant, proposalIds) =>
        proposalIds.map((proposalId) => {
          const runId = proposalId.slice(2);
          read.add(runId);
          return {
            proposalId,
            status: runId === target ? 'rejected' : 'pending',
            observation: JSON.stringify({ proposalId, decision: runId === target ? 'rejected' : 'pending' }),
            runId,
            proposer: SCOPE.userId,
            agent: 'trader',
          };
        }),
    };
    @Global()
    @Module({ providers: [{ provide: PROPOSAL_OUTCOMES, useValue: outcomes }], exports: [PROPOSAL_OUTCOMES] })
    class Outcomes {}
    app = await Test.createTestingModule({
      imports: [
        Outcomes,
        AgentModule.forRoot({
          agents: [spec(new ScriptedModelProvider([{ text: 'heard it' }]))],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
        AgentWorkerModule.forRoot({ runStore: store, leaseMs: 100 }),
      ],
      providers: [WorkerSkills],
    }).compile();
    await app.init();
    await until(async () => (await store.get(SCOPE.tenantId, target))?.status === 'succeeded', 'the target run to resume and end', 20_000);
    expect(read.size).toBe(ids.length); // every waiting run was read
    expect((await store.get(SCOPE.tenantId, 'r-000'))?.status).toBe('waiting');
  });
});
