import { AgentAuditLog } from './agent-audit-log';
import { AuditEntry } from './audit-entry';
import { InMemoryAuditLogStore } from './in-memory-audit-log.store';

const e = (runId: string): AuditEntry => ({
  runId,
  agent: 'a',
  tenantId: 't',
  userId: 'u',
  skill: 's',
  action: 'read',
  decision: 'allowed',
  cause: null,
  outcome: 'ok',
  durationMs: 1,
  tokens: 1,
  at: new Date(),
});

class FlakyStore extends InMemoryAuditLogStore {
  /** While true, every call fails, as when the database is unreachable. */
  down = false;
  appends = 0;
  override async append(entries: readonly AuditEntry[]): Promise<void> {
    this.appends++;
    if (this.down) throw new Error('store down');
    return super.append(entries);
  }
  override async setAside(letters: Parameters<InMemoryAuditLogStore['setAside']>[0]): Promise<void> {
    if (this.down) throw new Error('store down');
    return super.setAside(letters);
  }
  override async query(filter: Parameters<InMemoryAuditLogStore['query']>[0]) {
    if (this.down) throw new Error('store down');
    return super.query(filter);
  }
}

/** What PostgreSQL says of a value a column can never hold (SQLSTATE 22021). */
const invalidValue = () => Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });

/** A store that refuses every batch holding one given run (an unwritable row), like PostgreSQL refusing a bad value. */
class PoisonedStore extends InMemoryAuditLogStore {
  constructor(private readonly poison: string) {
    super();
  }
  override async append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.some((x) => x.runId === this.poison)) throw invalidValue();
    return super.append(entries);
  }
  refusesEntry(err: unknown): boolean {
    return (err as { code?: string }).code === '22021';
  }
}

/** A store whose appends fail (a lock timeout, a trigger, a full tablespace) while its reads and dead letters answer. */
class FailingWritesStore extends PoisonedStore {
  failing = true;
  constructor() {
    super('none');
  }
  override async append(entries: readonly AuditEntry[]): Promise<void> {
    if (this.failing) throw Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });
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
    store.down = true;
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    log.record(e('1'));
    await expect(log.flush()).rejects.toThrow('store down');
    expect(log.pending).toBe(1);
    store.down = false;
    log.record(e('2'));
    await log.flush();
    expect((await store.query({})).map((r) => r.runId)).toEqual(['1', '2']);
    expect(log.deadLettered).toBe(0);
    await log.close();
  });

  it('sets aside one poisoned entry among a hundred and writes the ninety-nine others, in order', async () => {
    const store = new PoisonedStore('42');
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    for (let i = 0; i < 100; i++) log.record(e(String(i)));
    await log.flush();
    const written = (await store.query({ limit: 1000 })).map((r) => r.runId);
    expect(written).toHaveLength(99);
    expect(written).not.toContain('42');
    expect(written).toEqual(Array.from({ length: 100 }, (_, i) => String(i)).filter((id) => id !== '42'));
    expect(log.deadLettered).toBe(1);
    expect(log.metrics()).toMatchObject({ pending: 0, written: 99, deadLettered: 1, dropped: 0 });
    const letters = await store.deadLetters();
    expect(letters).toHaveLength(1);
    expect(letters[0].entry.runId).toBe('42');
    expect(letters[0].error).toContain('0x00');
    // The trail is not blocked: later entries of every tenant are written.
    log.record(e('after'));
    await log.flush();
    expect((await store.query({ runId: 'after' })).length).toBe(1);
    await log.close();
  });

  it('loses nothing during an outage: entries stay queued and are all written once the store is back', async () => {
    const store = new FlakyStore();
    const log = new AgentAuditLog(store, { batchSize: 10, flushIntervalMs: 60_000 });
    store.down = true;
    for (let i = 0; i < 35; i++) log.record(e(String(i)));
    await expect(log.flush()).rejects.toThrow('store down');
    for (let i = 35; i < 50; i++) log.record(e(String(i)));
    await expect(log.flush()).rejects.toThrow('store down');
    expect(log.pending).toBe(50);
    expect(log.deadLettered).toBe(0);
    store.down = false;
    await log.flush();
    expect((await store.query({ limit: 1000 })).map((r) => r.runId)).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
    expect(await store.deadLetters()).toEqual([]);
    expect(log.metrics()).toMatchObject({ pending: 0, written: 50, deadLettered: 0, dropped: 0 });
    await log.close();
  });

  it('does not set aside a good entry on a single blip of the store: it is written at the next flush', async () => {
    const store = new PoisonedStore('none');
    let fails = 1;
    const append = store.append.bind(store);
    store.append = async (entries) => {
      if (fails-- > 0) throw invalidValue(); // even a blip that looks like a bad value: tried once more alone first
      return append(entries);
    };
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    log.record(e('only'));
    await log.flush();
    expect(log.deadLettered).toBe(0);
    expect((await store.query({ runId: 'only' })).length).toBe(1);
    await log.close();
  });

  it('keeps an entry whose writes fail while the store still reads and takes dead letters, and writes it once after (attack: a failing write taken for a bad entry)', async () => {
    const store = new FailingWritesStore();
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    for (const id of ['1', '2', '3']) log.record(e(id));
    await expect(log.flush()).rejects.toThrow('lock timeout');
    await expect(log.flush()).rejects.toThrow('lock timeout');
    expect(await store.query({})).toEqual([]); // reads answer
    expect(await store.deadLetters()).toEqual([]);
    expect(log.metrics()).toMatchObject({ pending: 3, deadLettered: 0, dropped: 0, failedWrites: 2 });
    store.failing = false;
    await log.flush();
    expect((await store.query({})).map((r) => r.runId)).toEqual(['1', '2', '3']);
    expect(log.metrics()).toMatchObject({ pending: 0, written: 3, deadLettered: 0 });
    await log.close();
  });

  it('without refusesEntry a store never has an entry set aside: a failing append keeps it queued', async () => {
    const store = new InMemoryAuditLogStore();
    let fail = true;
    const append = store.append.bind(store);
    store.append = async (entries) => (fail ? Promise.reject(invalidValue()) : append(entries));
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    log.record(e('kept'));
    await expect(log.flush()).rejects.toThrow('invalid byte sequence');
    expect(log.metrics()).toMatchObject({ pending: 1, deadLettered: 0 });
    fail = false;
    await log.flush();
    expect((await store.query({ runId: 'kept' })).length).toBe(1);
    await log.close();
  });

  it('drops the oldest entries past maxBuffered while the store is down, and counts them', async () => {
    const store = new FlakyStore();
    store.down = true;
    const log = new AgentAuditLog(store, { batchSize: 5, maxBuffered: 10, flushIntervalMs: 60_000 });
    for (let i = 0; i < 13; i++) log.record(e(String(i)));
    await expect(log.flush()).rejects.toThrow('store down');
    expect(log.pending).toBe(10);
    expect(log.dropped).toBe(3);
    store.down = false;
    await log.flush();
    expect((await store.query({ limit: 100 })).map((r) => r.runId)).toEqual(['3', '4', '5', '6', '7', '8', '9', '10', '11', '12']);
    await log.close();
  });

  it('cleans NUL and lone surrogates from the text fields at record time, and counts it', async () => {
    const store = new InMemoryAuditLogStore();
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
    log.record({ ...e('n'), userId: 'eve\u0000root', tenantId: 'acme\ud800', cause: '\udc00x', approvers: ['a\u0000'] });
    log.record(e('clean'));
    expect(log.sanitized).toBe(1);
    await log.flush();
    const [row] = await store.query({ runId: 'n' });
    expect(row).toMatchObject({ userId: 'eve\ufffdroot', tenantId: 'acme\ufffd', cause: '\ufffdx', approvers: ['a\ufffd'] });
    // A well-formed surrogate pair is kept.
    log.record({ ...e('pair'), userId: 'emoji \ud83d\ude00' });
    expect(log.sanitized).toBe(1);
    expect((await log.query({ runId: 'pair' }))[0].userId).toBe('emoji \ud83d\ude00');
    await log.close();
  });

  it('close() tries again while the store is down, then counts what it could not write', async () => {
    const store = new FlakyStore();
    store.down = true;
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 1, closeAttempts: 3 });
    log.record(e('1'));
    log.record(e('2'));
    const before = store.appends;
    await expect(log.close()).rejects.toThrow('store down');
    expect(store.appends - before).toBeGreaterThanOrEqual(3);
    expect(log.dropped).toBe(2);
  });

  it('close() writes everything once the store comes back during its retries', async () => {
    const store = new FlakyStore();
    store.down = true;
    const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 20, closeAttempts: 5 });
    log.record(e('1'));
    setTimeout(() => (store.down = false), 30);
    await log.close();
    expect(log.dropped).toBe(0);
    expect((await store.query({})).map((r) => r.runId)).toEqual(['1']);
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
