import { randomUUID } from 'node:crypto';
import type { AgentRunClock, AgentRunLease, AgentRunOutcome, AgentRunStore, NewAgentRun } from '../worker/worker.ports';
import type { RunJournalEntry } from '../journal/run-journal';

/** What a store factory gives the contract (the same shape as `@zmodu/outbox/testing`'s). */
export interface AgentRunStoreHarness {
  store: AgentRunStore;
  /** Release what the store holds (connections, files). */
  close?: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A clock under which the cases that do not play an outage never see one (no gap of 10 s between contacts). */
const CLOCK: AgentRunClock = { outageMs: 10_000, graceMs: 10_000 };
/** The lease of a claim: the run, its owner, and the claim's attempt (the record's attempts). */
const leaseOf = (runId: string, owner: string, attempt = 1): AgentRunLease => ({ runId, owner, attempt });
const ids = async (store: AgentRunStore, limit = 100) => {
  const { interrupted, queued } = await store.recoverable(limit, CLOCK);
  return [...interrupted, ...queued];
};

/**
 * The shared cases every AgentRunStore must pass, in a describe() named `name`. The factory returns a fresh, empty
 * store (its clock of contacts too). The cases include many concurrent claimers of one run, concurrent inserts of one
 * tenant over its share, lease fencing on the owner and the attempt, and an outage longer than a lease, with short
 * leases and real waits: run them on the database your store will use in production. A store with the run journal
 * (`appendJournal` and `readJournal`) passes its cases too: written once, in order, fenced on the claim, read for the
 * run's tenant only.
 */
export function agentRunStoreContract(name: string, factory: () => Promise<AgentRunStoreHarness>): void {
  describe(name, () => {
    let h: AgentRunStoreHarness;
    let store: AgentRunStore;
    beforeEach(async () => {
      h = await factory();
      store = h.store;
    });
    afterEach(async () => {
      await h.close?.();
    });

    const run = (over: Partial<NewAgentRun> = {}): NewAgentRun => ({
      id: randomUUID(),
      tenantId: 't1',
      userId: 'u1',
      permissions: ['market:read'],
      agent: 'trader',
      goal: 'quote AAPL',
      maxAttempts: 3,
      ...over,
    });
    const outcome = (over: Partial<AgentRunOutcome> = {}): AgentRunOutcome => ({
      status: 'succeeded',
      answer: 'done',
      stoppedReason: 'final',
      steps: [],
      pendingApprovals: [],
      error: null,
      ...over,
    });

    const turn = (seq: number, step: number, text = `turn ${step}`): RunJournalEntry => ({
      kind: 'turn',
      seq,
      step,
      requestDigest: 'a'.repeat(64),
      turn: {
        text,
        toolCalls: [{ id: 'c1', name: 'market.quote', arguments: { symbol: 'ACME' } }],
        usage: { inputTokens: 3, outputTokens: 4 },
      },
    });
    const done = (seq: number, step: number, observation = '{"price":101.3}'): RunJournalEntry => ({
      kind: 'call',
      seq,
      step,
      call: 0,
      spent: 7,
      record: {
        id: 'c1',
        name: 'market.quote',
        arguments: { symbol: 'ACME' },
        decision: 'allowed',
        cause: null,
        outcome: 'ok',
        ok: true,
        observation,
        durationMs: 2,
      },
    });
    type Journal = Required<Pick<AgentRunStore, 'appendJournal' | 'readJournal'>>;
    /** A journal case; a store without the journal must have neither of its two methods (one alone is a broken store). */
    const journalIt = (title: string, body: (j: Journal) => Promise<void>) =>
      it(`journal: ${title}`, async () => {
        if (typeof store.appendJournal !== 'function' && typeof store.readJournal !== 'function') {
          expect([store.appendJournal, store.readJournal]).toEqual([undefined, undefined]);
          return;
        }
        expect([typeof store.appendJournal, typeof store.readJournal]).toEqual(['function', 'function']);
        await body(store as Journal);
      });

    journalIt("keeps the entries of a claim in order, as written, for the run's tenant only", async (j) => {
      const r = run();
      await store.insert([r]);
      await store.claim(r.id, 'w1', 60_000);
      const lease = leaseOf(r.id, 'w1');
      // Text a model or a skill may return: NUL escapes, lone surrogates, quotes, a long text.
      const odd = `nul \u0000 lone \ud800 "quoted" ${'x'.repeat(20_000)}`;
      const entries = [
        turn(0, 0, odd),
        { kind: 'intent', seq: 1, step: 0, call: 0, skill: 'order.place' } as RunJournalEntry,
        done(2, 0),
        turn(3, 1, 'final'),
      ];
      for (const e of entries) expect(await j.appendJournal(lease, [e])).toBe(true);
      expect(await j.readJournal('t1', r.id)).toEqual(entries);
      expect(await j.readJournal('t2', r.id)).toEqual([]);
      expect(await j.readJournal('', r.id)).toEqual([]);
      expect(await j.readJournal('t1', randomUUID())).toEqual([]);
      // Page by page: after a seq, at most a limit; another tenant reads no page either.
      expect(await j.readJournal('t1', r.id, { afterSeq: -1, limit: 2 })).toEqual(entries.slice(0, 2));
      expect(await j.readJournal('t1', r.id, { afterSeq: 1, limit: 2 })).toEqual(entries.slice(2, 4));
      expect(await j.readJournal('t1', r.id, { afterSeq: 3, limit: 2 })).toEqual([]);
      expect(await j.readJournal('t1', r.id, { afterSeq: 0 })).toEqual(entries.slice(1));
      expect(await j.readJournal('t2', r.id, { afterSeq: -1, limit: 2 })).toEqual([]);
    });

    journalIt('writes an entry once: the same entry again changes nothing, another at its place is refused', async (j) => {
      const r = run();
      await store.insert([r]);
      await store.claim(r.id, 'w1', 60_000);
      const lease = leaseOf(r.id, 'w1');
      expect(await j.appendJournal(lease, [turn(0, 0)])).toBe(true);
      // A write whose answer was lost, made again.
      expect(await j.appendJournal(lease, [turn(0, 0)])).toBe(true);
      await expect(j.appendJournal(lease, [turn(0, 0, 'another answer')])).rejects.toThrow(/another entry at place 0/);
      expect(await j.readJournal('t1', r.id)).toEqual([turn(0, 0)]);
    });

    journalIt('writes a batch whole or not at all, and a batch made again (its answer lost) changes nothing', async (j) => {
      const r = run();
      await store.insert([r]);
      await store.claim(r.id, 'w1', 60_000);
      const lease = leaseOf(r.id, 'w1');
      expect(await j.appendJournal(lease, [turn(0, 0), done(1, 0)])).toBe(true);
      expect(await j.appendJournal(lease, [turn(0, 0), done(1, 0)])).toBe(true);
      // A batch whose second entry conflicts: its first (a new place) is not written either.
      await expect(j.appendJournal(lease, [turn(2, 1), done(1, 0, '"another outcome"')])).rejects.toThrow(/another entry at place 1/);
      expect(await j.readJournal('t1', r.id)).toEqual([turn(0, 0), done(1, 0)]);
      expect(await j.appendJournal(lease, [])).toBe(true);
      expect(await j.appendJournal(leaseOf(r.id, 'w2'), [])).toBe(false);
    });

    journalIt('writes nothing for a lease that does not hold the run (another owner, an older claim, a finished run)', async (j) => {
      const r = run();
      await store.insert([r]);
      // Not claimed yet.
      expect(await j.appendJournal(leaseOf(r.id, 'w1'), [turn(0, 0)])).toBe(false);
      await store.claim(r.id, 'w1', 20);
      expect(await j.appendJournal(leaseOf(r.id, 'w2'), [turn(0, 0)])).toBe(false);
      expect(await j.appendJournal(leaseOf(r.id, 'w1', 2), [turn(0, 0)])).toBe(false);
      expect(await j.appendJournal(leaseOf(r.id, 'w1'), [turn(0, 0)])).toBe(true);
      // w1's lease lapses; w2 takes the run over (attempt 2), reads what w1 wrote and goes on after it.
      await sleep(40);
      await store.recoverable(10, CLOCK);
      expect(await store.claim(r.id, 'w2', 60_000)).toMatchObject({ attempts: 2 });
      expect(await j.appendJournal(leaseOf(r.id, 'w1'), [done(1, 0, '"w1 after it lost the run"')])).toBe(false);
      expect(await j.readJournal('t1', r.id)).toEqual([turn(0, 0)]);
      expect(await j.appendJournal(leaseOf(r.id, 'w2', 2), [done(1, 0)])).toBe(true);
      expect(await store.finish(leaseOf(r.id, 'w2', 2), outcome())).toBe(true);
      expect(await j.appendJournal(leaseOf(r.id, 'w2', 2), [turn(2, 1)])).toBe(false);
      expect(await j.readJournal('t1', r.id)).toEqual([turn(0, 0), done(1, 0)]);
    });

    journalIt('a write with leaseMs renews the lease, as a heartbeat does (a run that writes holds its run)', async (j) => {
      const kept = run();
      const lapsed = run();
      await store.insert([kept, lapsed]);
      await store.claim(kept.id, 'w1', 30);
      await store.claim(lapsed.id, 'w1', 30);
      expect(await j.appendJournal(leaseOf(kept.id, 'w1'), [turn(0, 0)], 60_000)).toBe(true);
      expect(await j.appendJournal(leaseOf(lapsed.id, 'w1'), [turn(0, 0)])).toBe(true);
      await sleep(80);
      // Only the run whose write renewed its lease is still held; the other's lapsed and is taken back.
      expect(await ids(store)).toEqual([lapsed.id]);
      expect((await store.get('t1', kept.id))?.status).toBe('running');
    });

    journalIt('keeps the journals of 20 runs written at once apart', async (j) => {
      const runs = Array.from({ length: 20 }, (_, i) => run({ tenantId: `t${i % 3}` }));
      await store.insert(runs);
      for (const r of runs) await store.claim(r.id, 'w1', 60_000);
      await Promise.all(
        runs.map(async (r, i) => {
          const lease = leaseOf(r.id, 'w1');
          await j.appendJournal(lease, [turn(0, 0, `run ${i}`)]);
          await j.appendJournal(lease, [done(1, 0, `{"run":${i}}`)]);
        }),
      );
      for (const [i, r] of runs.entries())
        expect(await j.readJournal(`t${i % 3}`, r.id)).toEqual([turn(0, 0, `run ${i}`), done(1, 0, `{"run":${i}}`)]);
    });

    type Waits = Required<Pick<AgentRunStore, 'suspend' | 'settle' | 'waiting'>>;
    /** A waits case; a store without waits must have none of their three methods. */
    const waitsIt = (title: string, body: (w: Waits) => Promise<void>) =>
      it(`waits: ${title}`, async () => {
        const methods = [store.suspend, store.settle, store.waiting].map((m) => typeof m);
        if (methods.every((t) => t === 'undefined')) {
          expect(methods).toEqual(['undefined', 'undefined', 'undefined']);
          return;
        }
        expect(methods).toEqual(['function', 'function', 'function']);
        await body(store as Waits);
      });
    const P1 = '11111111-1111-4111-8111-111111111111';
    const P2 = '22222222-2222-4222-8222-222222222222';
    const wait = (proposalIds: string[], waitMs = 60_000) => ({ proposalIds, waitMs, answer: 'waiting', steps: [], pendingApprovals: [] });
    const decided = (proposalId: string, status: 'executed' | 'rejected' = 'executed') => ({
      proposalId,
      status,
      observation: `{"decision":"${status}"}`,
    });

    waitsIt('a run waits under its lease, holding none, and resumes when every proposal it waits for is decided', async (w) => {
      const r = run();
      await store.insert([r]);
      await store.claim(r.id, 'w1', 60_000);
      expect(await w.suspend(leaseOf(r.id, 'w2'), wait([P1, P2]))).toBe(false);
      expect(await w.suspend(leaseOf(r.id, 'w1'), wait([P1, P2]))).toBe(true);
      const waiting = await store.get('t1', r.id);
      expect(waiting).toMatchObject({
        status: 'waiting',
        leaseOwner: null,
        leaseUntil: null,
        waitingFor: [P1, P2],
        decisions: [],
        stoppedReason: 'waiting',
      });
      expect(waiting?.waitUntil).toBeInstanceOf(Date);
      // A waiting run is not claimed, not recovered, not finished by its old lease.
      expect(await store.claim(r.id, 'w3', 60_000)).toBeNull();
      expect(await ids(store)).not.toContain(r.id);
      expect(await store.finish(leaseOf(r.id, 'w1'), outcome())).toBe(false);
      expect((await w.waiting(10)).map((x) => x.id)).toEqual([r.id]);
      // Another tenant, another proposal: nothing. One of two decided: still waiting.
      expect(await w.settle('t2', r.id, [decided(P1)])).toEqual({ resumed: false });
      expect(await w.settle('t1', r.id, [decided('33333333-3333-4333-8333-333333333333')])).toEqual({ resumed: false });
      expect(await w.settle('t1', r.id, [decided(P1)])).toEqual({ resumed: false });
      expect((await store.get('t1', r.id))?.status).toBe('waiting');
      // A decision made again does not replace the first.
      expect(await w.settle('t1', r.id, [decided(P1, 'rejected')])).toEqual({ resumed: false });
      expect(await w.settle('t1', r.id, [decided(P2, 'rejected')])).toEqual({ resumed: true });
      const resumed = await store.get('t1', r.id);
      expect(resumed).toMatchObject({ status: 'queued', decisions: [decided(P1), decided(P2, 'rejected')], maxAttempts: 4 });
      expect(await w.settle('t1', r.id, [decided(P2)])).toEqual({ resumed: false });
      expect(await w.waiting(10)).toEqual([]);
      // Claimed again, it is a run like any other.
      expect(await store.claim(r.id, 'w2', 60_000)).toMatchObject({ status: 'running', attempts: 2 });
    });

    waitsIt('of 20 settles at once that each complete the decisions, exactly one resumes the run', async (w) => {
      const r = run();
      await store.insert([r]);
      await store.claim(r.id, 'w1', 60_000);
      await w.suspend(leaseOf(r.id, 'w1'), wait([P1]));
      const results = await Promise.all(Array.from({ length: 20 }, () => w.settle('t1', r.id, [decided(P1)])));
      expect(results.filter((x) => x.resumed)).toHaveLength(1);
      expect((await store.get('t1', r.id))?.status).toBe('queued');
    });

    waitsIt('with any (resumeOn each), resumes at the first decision of several, once under 20 settles at once', async (w) => {
      const r = run();
      await store.insert([r]);
      await store.claim(r.id, 'w1', 60_000);
      await w.suspend(leaseOf(r.id, 'w1'), wait([P1, P2]));
      expect(await w.settle('t2', r.id, [decided(P1)], { any: true })).toEqual({ resumed: false });
      const results = await Promise.all(Array.from({ length: 20 }, () => w.settle('t1', r.id, [decided(P1)], { any: true })));
      expect(results.filter((x) => x.resumed)).toHaveLength(1);
      expect(await store.get('t1', r.id)).toMatchObject({ status: 'queued', decisions: [decided(P1)] });
    });

    waitsIt("bounds a tenant's waiting runs: of 20 suspends at once with maxPerTenant 5, five wait, the rest are 'full'", async (w) => {
      const runs = Array.from({ length: 20 }, () => run());
      const other = run({ tenantId: 't2', userId: 'u2' });
      await store.insert([...runs, other]);
      for (const r of [...runs, other]) await store.claim(r.id, 'w1', 60_000);
      const results = await Promise.all(runs.map((r) => w.suspend(leaseOf(r.id, 'w1'), { ...wait([P1]), maxPerTenant: 5 })));
      expect(results.filter((x) => x === true)).toHaveLength(5);
      expect(results.filter((x) => x === 'full')).toHaveLength(15);
      // A refused one still holds its run (nothing written); another tenant has its own bound.
      const refused = runs[results.indexOf('full')];
      expect(await store.get('t1', refused.id)).toMatchObject({ status: 'running', leaseOwner: 'w1' });
      expect(await w.suspend(leaseOf(other.id, 'w1'), { ...wait([P1]), maxPerTenant: 5 })).toBe(true);
      // Without the lease, false as before (never 'full').
      expect(await w.suspend(leaseOf(refused.id, 'w9'), { ...wait([P1]), maxPerTenant: 5 })).toBe(false);
    });

    waitsIt('pages through every waiting run in id order after a cursor, and lists those whose wait ends first first', async (w) => {
      const runs = [run(), run(), run({ tenantId: 't2', userId: 'u2' })];
      await store.insert(runs);
      for (const [i, r] of runs.entries()) {
        await store.claim(r.id, 'w1', 60_000);
        await w.suspend(leaseOf(r.id, 'w1'), wait([P1], [300_000, 100_000, 200_000][i]));
      }
      const byId = runs.map((r) => r.id).sort((a, b) => (a < b ? -1 : 1));
      const first = await w.waiting(2, '');
      expect(first.map((r) => r.id)).toEqual(byId.slice(0, 2));
      const second = await w.waiting(2, first[1].id);
      expect(second.map((r) => r.id)).toEqual(byId.slice(2));
      expect(await w.waiting(2, second[0].id)).toEqual([]);
      // Without a cursor: the soonest end of wait first, whatever the tenant.
      expect((await w.waiting(3)).map((r) => r.id)).toEqual([runs[1].id, runs[2].id, runs[0].id]);
    });

    it('stores runs as queued, with their scope, in one batch', async () => {
      const a = run();
      const b = run({ tenantId: 't2', userId: 'u2', permissions: [] });
      await store.insert([a, b]);
      const got = await store.get('t1', a.id);
      expect(got).toMatchObject({
        id: a.id,
        tenantId: 't1',
        userId: 'u1',
        permissions: ['market:read'],
        agent: 'trader',
        goal: 'quote AAPL',
      });
      expect(got).toMatchObject({ status: 'queued', attempts: 0, maxAttempts: 3, answer: null, error: null, leaseOwner: null });
      expect(got?.createdAt).toBeInstanceOf(Date);
      expect(await store.mailbox(60_000)).toEqual({ queued: 2, claimed: 0 });
    });

    it('get is scoped to the tenant: another tenant, or an empty one, gets null', async () => {
      const a = run();
      await store.insert([a]);
      expect(await store.get('t2', a.id)).toBeNull();
      expect(await store.get('', a.id)).toBeNull();
      expect(await store.get('t1', randomUUID())).toBeNull();
      expect((await store.get('t1', a.id))?.id).toBe(a.id);
    });

    it('claim is exclusive: of 20 concurrent claimers exactly one wins', async () => {
      const a = run();
      await store.insert([a]);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim(a.id, `owner-${i}`, 5000)));
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ status: 'running', attempts: 1 });
      // Its lease runs leaseMs from the claim, the store's clock for both (a first claim starts the run).
      expect(winners[0]!.leaseUntil!.getTime() - winners[0]!.startedAt!.getTime()).toBe(5000);
      const stored = await store.get('t1', a.id);
      expect(stored?.leaseOwner).toBe(winners[0]?.leaseOwner);
      expect(await store.mailbox(60_000)).toEqual({ queued: 0, claimed: 1 });
      expect(await store.release(leaseOf(a.id, String(stored?.leaseOwner)), 'shutdown')).toBe(true);
      expect((await store.mailbox(60_000)).queued).toBe(1); // interrupted: waiting to start again
    });

    it('claim of an unknown or finished run is null', async () => {
      expect(await store.claim(randomUUID(), 'w1', 5000)).toBeNull();
      const a = run();
      await store.insert([a]);
      await store.claim(a.id, 'w1', 5000);
      expect(await store.finish(leaseOf(a.id, 'w1'), outcome())).toBe(true);
      expect(await store.claim(a.id, 'w2', 5000)).toBeNull();
    });

    it('finish writes only for the lease owner', async () => {
      const a = run();
      await store.insert([a]);
      await store.claim(a.id, 'w1', 5000);
      expect(await store.finish(leaseOf(a.id, 'w2'), outcome({ answer: 'stale' }))).toBe(false);
      expect(await store.release(leaseOf(a.id, 'w2'), 'nope')).toBe(false);
      const steps = [{ step: 1, text: 'thinking', toolCalls: [] }] as unknown as AgentRunOutcome['steps'];
      expect(
        await store.finish(
          leaseOf(a.id, 'w1'),
          outcome({ status: 'failed', answer: '', stoppedReason: 'model_error', error: 'boom', steps }),
        ),
      ).toBe(true);
      expect(await store.finish(leaseOf(a.id, 'w1'), outcome())).toBe(false);
      expect(await store.get('t1', a.id)).toMatchObject({
        status: 'failed',
        stoppedReason: 'model_error',
        error: 'boom',
        steps,
        leaseOwner: null,
        leaseUntil: null,
      });
      expect((await store.get('t1', a.id))?.finishedAt).toBeInstanceOf(Date);
    });

    it('heartbeat renews held leases and reports the lost ones', async () => {
      const a = run();
      const b = run();
      await store.insert([a, b]);
      await store.claim(a.id, 'w1', 5000);
      await store.claim(b.id, 'w2', 5000);
      const before = (await store.get('t1', a.id))?.leaseUntil?.getTime() ?? 0;
      await sleep(20);
      const unknown = randomUUID();
      const w1 = [leaseOf(a.id, 'w1'), leaseOf(b.id, 'w1'), leaseOf(unknown, 'w1')];
      expect((await store.heartbeat(w1, 60_000, CLOCK)).sort()).toEqual([b.id, unknown].sort());
      expect((await store.get('t1', a.id))?.leaseUntil?.getTime()).toBeGreaterThan(before + 30_000);
      expect(await store.heartbeat([], 1000, CLOCK)).toEqual([]);
    });

    it('release gives a running run back as interrupted; it can be claimed again', async () => {
      const a = run();
      await store.insert([a]);
      await store.claim(a.id, 'w1', 5000);
      expect(await store.release(leaseOf(a.id, 'w1'), 'shutdown')).toBe(true);
      expect(await store.get('t1', a.id)).toMatchObject({ status: 'interrupted', leaseOwner: null, error: 'shutdown' });
      expect(await store.heartbeat([leaseOf(a.id, 'w1')], 5000, CLOCK)).toEqual([a.id]);
      expect(await store.claim(a.id, 'w2', 5000)).toMatchObject({ status: 'running', attempts: 2 });
    });

    it('recoverable returns interrupted runs and queued ones, and running ones whose lease expired (marked interrupted)', async () => {
      const queued = run();
      const interrupted = run();
      const expired = run();
      const live = run();
      const done = run();
      // Created a few ms apart: each list is ordered by creation (a coarse clock may give rows of one batch one time).
      for (const batch of [[queued], [interrupted], [expired], [live, done]]) {
        await store.insert(batch);
        await sleep(5);
      }
      await store.claim(interrupted.id, 'w1', 5000);
      await store.release(leaseOf(interrupted.id, 'w1'), 'shutdown');
      await store.claim(expired.id, 'dead', 50);
      await store.claim(live.id, 'w1', 60_000);
      await store.claim(done.id, 'w1', 60_000);
      await store.finish(leaseOf(done.id, 'w1'), outcome());
      await sleep(120);
      const got = await store.recoverable(100, CLOCK);
      // Taken back runs first (each list oldest first): they go before newer goals.
      expect(got).toEqual({ interrupted: [interrupted.id, expired.id], queued: [queued.id] });
      expect(await store.get('t1', expired.id)).toMatchObject({ status: 'interrupted', leaseOwner: null });
      expect((await store.get('t1', live.id))?.status).toBe('running');
      expect(await store.finish(leaseOf(expired.id, 'dead'), outcome())).toBe(false);
      expect(await store.recoverable(1, CLOCK)).toEqual({ interrupted: [interrupted.id], queued: [queued.id] });
      expect(await store.recoverable(0, CLOCK)).toEqual({ interrupted: [], queued: [] });
    });

    it('a graceful release gives the start back: maxAttempts + 1 (a deploy is not the run failing)', async () => {
      const a = run({ maxAttempts: 1 });
      await store.insert([a]);
      for (const [i, owner] of ['w1', 'w2', 'w3'].entries()) {
        expect(await store.claim(a.id, owner, 5000)).toMatchObject({ status: 'running' });
        expect(await store.release(leaseOf(a.id, owner, i + 1), 'shutdown')).toBe(true);
      }
      expect(await store.get('t1', a.id)).toMatchObject({ status: 'interrupted', attempts: 3, maxAttempts: 4 });
      expect(await store.claim(a.id, 'w4', 5000)).toMatchObject({ status: 'running', attempts: 4 });
    });

    it('a run out of attempts is marked failed at its next claim, returned (status failed) to exactly one claimer', async () => {
      const a = run({ maxAttempts: 2 });
      await store.insert([a]);
      for (const owner of ['w1', 'w2']) {
        // Its instance dies: the lease expires and a sweep marks it interrupted (a crash uses the start).
        expect(await store.claim(a.id, owner, 1)).not.toBeNull();
        await new Promise((r) => setTimeout(r, 10));
        expect(await ids(store, 10)).toContain(a.id);
      }
      const claims = await Promise.all(['w3', 'w4', 'w5', 'w6'].map((owner) => store.claim(a.id, owner, 5000)));
      const reported = claims.filter((c) => c !== null);
      expect(reported).toHaveLength(1);
      expect(reported[0]).toMatchObject({ id: a.id, status: 'failed', attempts: 2, leaseOwner: null });
      expect(await store.claim(a.id, 'w7', 5000)).toBeNull();
      const got = await store.get('t1', a.id);
      expect(got).toMatchObject({ status: 'failed', attempts: 2 });
      expect(got?.error).toMatch(/maxAttempts/);
      expect(await ids(store, 10)).toEqual([]);
    });

    it('fences every write on the attempt: an older claim of the same owner writes nothing (attack: a copy left running)', async () => {
      const a = run();
      await store.insert([a]);
      expect(await store.claim(a.id, 'w1', 30)).toMatchObject({ attempts: 1 });
      await sleep(60);
      expect(await ids(store)).toEqual([a.id]); // its lease lapsed: taken back
      expect(await store.claim(a.id, 'w1', 60_000)).toMatchObject({ attempts: 2, leaseOwner: 'w1' });
      // The first claim's copy (same instance) still winds down: its renewal, outcome and release are refused.
      expect(await store.heartbeat([leaseOf(a.id, 'w1', 1)], 60_000, CLOCK)).toEqual([a.id]);
      expect(await store.finish(leaseOf(a.id, 'w1', 1), outcome({ answer: 'stale copy' }))).toBe(false);
      expect(await store.release(leaseOf(a.id, 'w1', 1), 'stale')).toBe(false);
      expect(await store.get('t1', a.id)).toMatchObject({ status: 'running', attempts: 2, answer: null });
      expect(await store.finish(leaseOf(a.id, 'w1', 2), outcome({ answer: 'the one outcome' }))).toBe(true);
      expect(await store.get('t1', a.id)).toMatchObject({ status: 'succeeded', answer: 'the one outcome' });
    });

    it('keeps a lease that lapsed in an outage for its owner to store its outcome; a dead owner loses it after the grace (attack: an outage longer than leaseMs)', async () => {
      const clock: AgentRunClock = { outageMs: 1000, graceMs: 1500 };
      const dead = run();
      const ended = run();
      const gone = run();
      await store.insert([dead, ended, gone]);
      await store.heartbeat([], 60_000, clock); // instances reach the store
      expect(await store.claim(dead.id, 'dead', 40)).not.toBeNull();
      await sleep(120);
      // Its lease lapsed while instances still reached the store (before the outage): taken back at once, later too.
      expect(await store.claim(ended.id, 'w1', 300)).not.toBeNull();
      expect(await store.claim(gone.id, 'w2', 300)).not.toBeNull();
      expect(await store.heartbeat([leaseOf(ended.id, 'w1')], 300, clock)).toEqual([]); // the last contact before the outage
      await sleep(1800); // the outage: no instance reaches the store, both leases lapse
      const after = await store.recoverable(10, clock); // the first contact after it
      expect(after.interrupted).toEqual([dead.id]);
      expect((await store.get('t1', ended.id))?.status).toBe('running');
      expect((await store.get('t1', gone.id))?.status).toBe('running');
      // The live owner renews and stores the outcome of the run that ended during the outage: it ends once.
      expect(await store.heartbeat([leaseOf(ended.id, 'w1')], 60_000, clock)).toEqual([]);
      expect(await store.finish(leaseOf(ended.id, 'w1'), outcome({ answer: 'ended in the outage' }))).toBe(true);
      expect(await store.get('t1', ended.id)).toMatchObject({ status: 'succeeded', attempts: 1, answer: 'ended in the outage' });
      // The other owner never comes back: once the grace is over (instances reaching the store all along), taken back.
      for (let i = 0; i < 8; i++) {
        await sleep(250);
        await store.heartbeat([], 60_000, clock);
      }
      // One insert gives the three runs one created_at, so their order is the ids' order: compare as a set.
      expect([...(await store.recoverable(10, clock)).interrupted].sort()).toEqual([dead.id, gone.id].sort());
      expect(await store.finish(leaseOf(gone.id, 'w2'), outcome())).toBe(false);
    });

    it('holds each tenant to its share of waiting runs under 40 concurrent inserts, and leaves room for another tenant (attack: one tenant floods the mailbox)', async () => {
      const share = 10;
      const flood = Array.from({ length: 40 }, () => run({ tenantId: 'loud' }));
      const results = await Promise.all(flood.map((r) => store.insert([r], { perTenant: share })));
      const refused = results.flatMap((r) => r.refused);
      expect(refused).toHaveLength(40 - share);
      expect(refused.every((r) => r.tenantId === 'loud' && r.bound === 'tenant' && r.waiting === share)).toBe(true);
      expect((await store.mailbox(60_000)).queued).toBe(share);
      const stored = flood.filter((r) => !refused.some((x) => x.runId === r.id));
      for (const r of stored) expect((await store.get('loud', r.id))?.status).toBe('queued');
      for (const r of refused) expect(await store.get('loud', r.runId)).toBeNull();
      // A quiet tenant's first goal, and a batch mixing both: each tenant is held to its own share.
      const quiet = run({ tenantId: 'quiet' });
      expect(await store.insert([quiet], { perTenant: share })).toEqual({ refused: [] });
      const mixed = [run({ tenantId: 'loud' }), run({ tenantId: 'quiet' })];
      expect((await store.insert(mixed, { perTenant: share })).refused.map((r) => r.runId)).toEqual([mixed[0].id]);
      // A started run leaves room in its tenant's share.
      expect(await store.claim(stored[0].id, 'w1', 60_000)).not.toBeNull();
      expect(await store.insert([run({ tenantId: 'loud' })], { perTenant: share })).toEqual({ refused: [] });
      expect(await store.mailbox(60_000)).toEqual({ queued: share + 2, claimed: 1 });
    });

    it('holds the whole store to its total under 40 concurrent inserts of 40 tenants (attack: instances admitting from their own counts)', async () => {
      const total = 10;
      const flood = Array.from({ length: 40 }, (_, i) => run({ tenantId: `tenant-${i}` }));
      const results = await Promise.all(flood.map((r) => store.insert([r], { perTenant: 5, total })));
      const refused = results.flatMap((r) => r.refused);
      expect(refused).toHaveLength(40 - total);
      expect(refused.every((r) => r.bound === 'mailbox' && r.waiting === total)).toBe(true);
      expect((await store.mailbox(60_000)).queued).toBe(total);
      // A started run leaves room; the tenant's share still applies within the total.
      const stored = flood.find((r) => !refused.some((x) => x.runId === r.id)) as NewAgentRun;
      expect(await store.claim(stored.id, 'w1', 60_000)).not.toBeNull();
      const again = [run({ tenantId: 'tenant-x' }), run({ tenantId: 'tenant-x' })];
      expect((await store.insert(again, { perTenant: 5, total })).refused).toEqual([
        { runId: again[1].id, tenantId: 'tenant-x', bound: 'mailbox', waiting: total },
      ]);
    });
  });
}
