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
    await h.store.append([entry(), entry({ skill: 'order.submit', action: 'execute', decision: 'denied', cause: 'denied_execute_class', outcome: 'denied', tokens: 0 })]);
    const rows = await h.store.query({ runId: 'run-1' });
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ runId: 'run-1', agent: 'trader', tenantId: 't1', userId: 'u1', skill: 'market.quote', action: 'read', decision: 'allowed', cause: null, outcome: 'ok', durationMs: 3, tokens: 12 });
    expect(rows[0].at.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(rows[1]).toMatchObject({ skill: 'order.submit', decision: 'denied', cause: 'denied_execute_class' });
    expect(typeof rows[0].id).toBe('string');
  });

  it('filters by run, tenant, agent, skill, decision and time, and honours the limit', async () => {
    await h.store.append([
      entry({ runId: 'a', tenantId: 't1' }),
      entry({ runId: 'b', tenantId: 't2', agent: 'analyst', skill: 'db.query', decision: 'denied', cause: 'denied_not_listed', outcome: 'denied' }),
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
}
