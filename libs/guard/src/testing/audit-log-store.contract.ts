import { AUDIT_PAYLOAD_MAX_CHARS } from '../audit/audit-chain';
import { AuditEntry } from '../audit/audit-entry';
import { AuditLogStore } from '../audit/audit-log.store';

export interface StoreHarness<T> {
  store: T;
  /** Release what the store holds (connections, files). */
  close?: () => Promise<void>;
}

function entry(over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    runId: 'run-1',
    agent: 'trader',
    tenantId: 't1',
    userId: 'u1',
    skill: 'market.quote',
    action: 'read',
    decision: 'allowed',
    cause: null,
    outcome: 'ok',
    durationMs: 3,
    tokens: 12,
    at: new Date('2026-01-01T00:00:00Z'),
    ...over,
  };
}

/**
 * The shared cases every AuditLogStore must pass. Call it inside a describe() of your own
 * with a factory that returns a fresh, empty store.
 */
export function auditLogStoreContract(factory: () => Promise<StoreHarness<AuditLogStore>>): void {
  let h: StoreHarness<AuditLogStore>;
  beforeEach(async () => {
    h = await factory();
  });
  afterEach(async () => {
    await h.close?.();
  });

  it('appends a batch and returns it in order with every field', async () => {
    await h.store.append([
      entry(),
      entry({ skill: 'order.submit', action: 'execute', decision: 'denied', cause: 'denied_execute_class', outcome: 'denied', tokens: 0 }),
    ]);
    const rows = await h.store.query({ runId: 'run-1' });
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      runId: 'run-1',
      agent: 'trader',
      tenantId: 't1',
      userId: 'u1',
      skill: 'market.quote',
      action: 'read',
      decision: 'allowed',
      cause: null,
      outcome: 'ok',
      durationMs: 3,
      tokens: 12,
    });
    expect(rows[0].at.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(rows[1]).toMatchObject({ skill: 'order.submit', decision: 'denied', cause: 'denied_execute_class' });
    expect(typeof rows[0].id).toBe('string');
  });

  it('filters by run, tenant, agent, skill, decision and time, and honours the limit', async () => {
    await h.store.append([
      entry({ runId: 'a', tenantId: 't1' }),
      entry({
        runId: 'b',
        tenantId: 't2',
        agent: 'analyst',
        skill: 'db.query',
        decision: 'denied',
        cause: 'denied_not_listed',
        outcome: 'denied',
      }),
      entry({ runId: 'c', tenantId: 't1', at: new Date('2026-02-01T00:00:00Z') }),
    ]);
    expect((await h.store.query({ tenantId: 't1' })).map((r) => r.runId)).toEqual(['a', 'c']);
    expect((await h.store.query({ agent: 'analyst' })).map((r) => r.runId)).toEqual(['b']);
    expect((await h.store.query({ skill: 'db.query' })).map((r) => r.runId)).toEqual(['b']);
    expect((await h.store.query({ decision: 'denied' })).map((r) => r.runId)).toEqual(['b']);
    expect((await h.store.query({ since: new Date('2026-01-15T00:00:00Z') })).map((r) => r.runId)).toEqual(['c']);
    expect((await h.store.query({ until: new Date('2026-01-15T00:00:00Z') })).map((r) => r.runId)).toEqual(['a', 'b']);
    expect(await h.store.query({ limit: 1 })).toHaveLength(1);
  });

  it('filters by outcome and pages in id order after a given id', async () => {
    await h.store.append([
      entry({ runId: 'p1' }),
      entry({ runId: 'p2', outcome: 'error' }),
      entry({ runId: 'p3' }),
      entry({ runId: 'p4', outcome: 'error' }),
      entry({ runId: 'p5' }),
    ]);
    expect((await h.store.query({ outcome: 'error' })).map((r) => r.runId)).toEqual(['p2', 'p4']);
    const first = await h.store.query({ limit: 2 });
    expect(first.map((r) => r.runId)).toEqual(['p1', 'p2']);
    const second = await h.store.query({ limit: 2, afterId: first[1].id });
    expect(second.map((r) => r.runId)).toEqual(['p3', 'p4']);
    const third = await h.store.query({ limit: 2, afterId: second[1].id });
    expect(third.map((r) => r.runId)).toEqual(['p5']);
    expect(await h.store.query({ afterId: third[0].id })).toEqual([]);
    expect(await h.store.query({ afterId: '9223372036854775807' })).toEqual([]);
    // Past the largest id a store can hold (a bigint): refused as a bad id, not sent to the database.
    await expect(h.store.query({ afterId: '9223372036854775808' })).rejects.toThrow(RangeError);
  });

  it('keeps the arguments and the result of a call as JSON (dates as ISO text), and caps a long one with its digest', async () => {
    const big = 'x'.repeat(AUDIT_PAYLOAD_MAX_CHARS + 10);
    await h.store.append([
      entry({
        runId: 'args',
        args: { symbol: 'ACME', qty: 10, nested: { b: [1, null], a: 'caf\u00e9 \ud83d\ude00' } },
        result: { price: 12.5 },
      }),
      entry({ runId: 'args', args: { at: new Date('2026-03-01T00:00:00Z') }, result: { error: 'SkillFailed', reason: 'x' } }),
      entry({ runId: 'args', args: { text: big } }),
      entry({ runId: 'args' }),
      entry({ runId: 'args', args: null, result: 0 }),
    ]);
    const rows = await h.store.query({ runId: 'args' });
    expect(rows[0].args).toEqual({ symbol: 'ACME', qty: 10, nested: { b: [1, null], a: 'caf\u00e9 \ud83d\ude00' } });
    expect(rows[0].result).toEqual({ price: 12.5 });
    expect(rows[1].args).toEqual({ at: '2026-03-01T00:00:00.000Z' });
    expect(rows[1].result).toEqual({ error: 'SkillFailed', reason: 'x' });
    expect(rows[2].args).toEqual({
      truncated: true,
      chars: JSON.stringify({ text: big }).length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(rows[3].args).toBeUndefined();
    expect(rows[3].result).toBeUndefined();
    expect(rows[4].args).toBeNull();
    expect(rows[4].result).toBe(0);
    if (h.store.verify) expect(await h.store.verify('t1')).toMatchObject({ ok: true, entries: 5 });
  });

  it('keeps null tenant, user and agent', async () => {
    await h.store.append([entry({ runId: 'n', tenantId: null, userId: null, agent: null })]);
    const [row] = await h.store.query({ runId: 'n' });
    expect(row).toMatchObject({ tenantId: null, userId: null, agent: null });
  });

  it('keeps the proposal and the approvers of a staged execution, and filters by proposal', async () => {
    await h.store.append([
      entry({ runId: 's', skill: 'order.submit', action: 'execute', proposalId: 'p-1', approvers: ['lead', 'second'] }),
      entry({ runId: 's', skill: 'market.quote' }),
    ]);
    const rows = await h.store.query({ runId: 's' });
    expect(rows[0]).toMatchObject({ proposalId: 'p-1', approvers: ['lead', 'second'] });
    expect(rows[1].proposalId ?? null).toBeNull();
    expect(rows[1].approvers ?? null).toBeNull();
    expect((await h.store.query({ proposalId: 'p-1' })).map((r) => r.skill)).toEqual(['order.submit']);
  });

  it('accepts an empty batch', async () => {
    await h.store.append([]);
    expect(await h.store.query({})).toEqual([]);
  });

  it('keeps U+FFFD and characters outside the BMP as they are', async () => {
    await h.store.append([entry({ runId: 'u', userId: 'eve\ufffdroot', tenantId: 'caf\u00e9 \ud83d\ude00' })]);
    const [row] = await h.store.query({ runId: 'u' });
    expect(row).toMatchObject({ userId: 'eve\ufffdroot', tenantId: 'caf\u00e9 \ud83d\ude00' });
  });

  it('sets aside entries of any text (NUL, lone surrogates) and reads them back oldest first (when it keeps dead letters)', async () => {
    if (!h.store.setAside || !h.store.deadLetters) {
      expect(h.store.setAside).toBeUndefined();
      expect(h.store.deadLetters).toBeUndefined();
      return;
    }
    const at = new Date('2026-03-01T00:00:00Z');
    await h.store.setAside([
      { entry: entry({ runId: 'd1', userId: 'eve\u0000root', tenantId: 'x\ud800' }), error: 'invalid byte sequence 0x00', at },
      { entry: entry({ runId: 'd2', proposalId: 'p', approvers: ['a'] }), error: 'bad \u0000 error', at },
    ]);
    const letters = await h.store.deadLetters();
    expect(letters.map((l) => l.entry.runId)).toEqual(['d1', 'd2']);
    expect(letters[0].entry).toMatchObject({ userId: 'eve\u0000root', tenantId: 'x\ud800', skill: 'market.quote', tokens: 12 });
    expect(letters[0].entry.at.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(letters[0].error).toBe('invalid byte sequence 0x00');
    expect(letters[0].at.toISOString()).toBe(at.toISOString());
    expect(letters[1].entry).toMatchObject({ proposalId: 'p', approvers: ['a'] });
    expect(typeof letters[0].id).toBe('string');
    expect(await h.store.deadLetters(1)).toHaveLength(1);
    // Dead letters are not audit entries.
    expect(await h.store.query({})).toEqual([]);
  });

  it('keeps a hash chain per tenant that verifies (when it keeps one), characters outside the BMP and staged entries included', async () => {
    if (!h.store.verify) return expect(h.store.verify).toBeUndefined();
    await h.store.append([entry(), entry({ tenantId: 't2' }), entry({ tenantId: null, userId: 'caf\u00e9 \ud83d\ude00' })]);
    await h.store.append([entry({ proposalId: 'p-1', approvers: ['alice', 'bob'], at: new Date('2026-01-01T00:00:00.123Z') })]);
    expect(await h.store.verify('t1')).toMatchObject({ ok: true, entries: 2 });
    expect(await h.store.verify('t2')).toMatchObject({ ok: true, entries: 1 });
    expect(await h.store.verify(null)).toMatchObject({ ok: true, entries: 1 });
    const t1 = await h.store.verify('t1');
    expect(t1.ok && t1.head).toMatch(/^[0-9a-f]{64}$/);
  });
}
