import { AgentAuditLog } from './agent-audit-log';
import { AuditEntry } from './audit-entry';
import { InMemoryAuditLogStore } from './in-memory-audit-log.store';

const e = (runId: string): AuditEntry => ({
  runId, agent: 'a', tenantId: 't', userId: 'u', skill: 's', action: 'read', decision: 'allowed', cause: null, outcome: 'ok', durationMs: 1, tokens: 1, at: new Date(),
});

class FlakyStore extends InMemoryAuditLogStore {
  failures = 0;
  appends = 0;
  override async append(entries: readonly AuditEntry[]): Promise<void> {
    this.appends++;
    if (this.failures > 0) {
      this.failures--;
      throw new Error('store down');
    }
    return super.append(entries);
  }
}

describe('AgentAuditLog', () => {
  it('queues entries and writes them in one batch on flush', async () => {
    const store = new FlakyStore();
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    log.record(e('1'));
    log.record(e('2'));
    expect(store.appends).toBe(0);
    expect(log.pending).toBe(2);
    await log.flush();
    expect(store.appends).toBe(1);
    expect((await store.query({})).map((r) => r.runId)).toEqual(['1', '2']);
    await log.close();
  });

  it('flushes when the batch is full', async () => {
    const store = new FlakyStore();
    const log = new AgentAuditLog(store, { batchSize: 3, flushIntervalMs: 60_000 });
    for (const id of ['1', '2', '3']) log.record(e(id));
    await new Promise((r) => setImmediate(r));
    expect(store.appends).toBe(1);
    await log.close();
  });

  it('flushes on its timer', async () => {
    const store = new FlakyStore();
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 5 });
    log.record(e('1'));
    for (let i = 0; i < 100 && (await store.query({})).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await store.query({})).length).toBe(1);
    expect(store.appends).toBe(1);
    await log.close();
  });

  it('keeps a batch the store refused and writes it on the next flush, in order', async () => {
    const store = new FlakyStore();
    store.failures = 1;
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    log.record(e('1'));
    await expect(log.flush()).rejects.toThrow('store down');
    log.record(e('2'));
    await log.flush();
    expect((await store.query({})).map((r) => r.runId)).toEqual(['1', '2']);
    await log.close();
  });

  it('query() sees entries not yet flushed', async () => {
    const log = new AgentAuditLog(new InMemoryAuditLogStore(), { batchSize: 100, flushIntervalMs: 60_000 });
    log.record(e('x'));
    expect((await log.query({ runId: 'x' })).length).toBe(1);
    await log.close();
  });

  it('close() writes what is pending', async () => {
    const store = new InMemoryAuditLogStore();
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    log.record(e('last'));
    await log.close();
    expect((await store.query({ runId: 'last' })).length).toBe(1);
  });
});
