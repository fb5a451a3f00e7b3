import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AgentAuditLog } from './audit/agent-audit-log';
import { AUDIT_CHAIN_GENESIS, auditEntryHash } from './audit/audit-chain';
import { AuditEntry } from './audit/audit-entry';
import { AuditLogStore } from './audit/audit-log.store';
import { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
import { verifyAuditChain } from './audit/verify-audit-chain';
import { ZMODU_GUARD_MIGRATIONS } from './guard.migrations';
import { sampleAuditEntry } from './testing';

describe('the audit hash chain on PostgreSQL', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let store: TypeOrmAuditLogStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource({
      ...(await db.options({ migrations: ZMODU_GUARD_MIGRATIONS })),
      extra: { max: 12 },
    } as ConstructorParameters<typeof DataSource>[0]);
    await dataSource.initialize();
    await dataSource.runMigrations();
    store = new TypeOrmAuditLogStore(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  beforeEach(async () => {
    await dataSource.query('TRUNCATE zmodu_audit_log, zmodu_audit_dead_letters, zmodu_audit_intents');
    store.forgetHeads(); // the heads it wrote are gone
  });

  const entry = sampleAuditEntry;
  const sql = (text: string, params: unknown[] = []) => dataSource.query(text, params) as Promise<Array<Record<string, string>>>;
  const hashAt = async (seq: number, tenant = 'acme') =>
    (await sql('SELECT hash FROM zmodu_audit_log WHERE tenant_id = $1 AND seq = $2', [tenant, seq]))[0].hash;
  /** Ten entries of acme (seq 1..10), interleaved with four of globex and four without a tenant, in three batches. */
  const writeTen = async () => {
    const batch = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => [
        entry(`a${from + i}`, { approvers: i % 2 ? ['alice', 'bob'] : null, proposalId: i % 2 ? `p${i}` : null }),
        ...(i % 2 ? [entry(`g${from + i}`, { tenantId: 'globex' })] : []),
        ...(i % 3 === 0 ? [entry(`n${from + i}`, { tenantId: null })] : []),
      ]).flat();
    await store.append(batch(0, 4));
    await store.append(batch(4, 7));
    await store.append(batch(7, 10));
  };

  it('chains each tenant apart from 1, linked from the genesis hash, and verifies', async () => {
    await writeTen();
    const rows = await sql(`SELECT seq::text AS s, prev_hash, hash FROM zmodu_audit_log WHERE tenant_id = 'acme' ORDER BY id`);
    expect(rows.map((r) => Number(r.s))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(rows[0].prev_hash).toBe(AUDIT_CHAIN_GENESIS);
    rows.slice(1).forEach((r, i) => expect(r.prev_hash).toBe(rows[i].hash));
    expect(await store.verify('acme')).toEqual({ ok: true, entries: 10, head: rows[9].hash });
    expect(await store.verify('globex')).toMatchObject({ ok: true, entries: 4 });
    expect(await verifyAuditChain(dataSource, null)).toMatchObject({ ok: true, entries: 4 });
    expect(await verifyAuditChain(store, 'nobody')).toEqual({ ok: true, entries: 0, head: AUDIT_CHAIN_GENESIS });
  });

  it('an UPDATE of one field of one entry: altered, at its sequence number; the other tenants still verify', async () => {
    await writeTen();
    await sql(`UPDATE zmodu_audit_log SET decision = 'denied', cause = 'forged' WHERE tenant_id = 'acme' AND seq = 4`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 4, problem: 'altered' });
    expect(await store.verify('globex')).toMatchObject({ ok: true });
  });

  it('a change of the approvers or of the timestamp by one microsecond: altered', async () => {
    await writeTen();
    await sql(`UPDATE zmodu_audit_log SET approvers = '["alice"]' WHERE tenant_id = 'acme' AND seq = 2`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 2, problem: 'altered' });
    await sql(`UPDATE zmodu_audit_log SET approvers = '["alice", "bob"]' WHERE tenant_id = 'acme' AND seq = 2`);
    expect(await store.verify('acme')).toMatchObject({ ok: true });
    await sql(`UPDATE zmodu_audit_log SET at = at + interval '1 microsecond' WHERE tenant_id = 'acme' AND seq = 7`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 7, problem: 'altered' });
  });

  it('a change of the arguments or the result a call recorded (or wiping them): altered', async () => {
    await store.append([
      entry('p1', { args: { symbol: 'ACME', qty: 10 }, result: { orderId: 'o-1', amount: 1250 } }),
      entry('p2', { args: { key: 'orders.limit' }, result: { previous: 5, value: 50, version: 2 } }),
      entry('p3'),
    ]);
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 3 });
    const [{ args }] = await sql(`SELECT args FROM zmodu_audit_log WHERE run_id = 'p1'`);
    expect(JSON.parse(args)).toEqual({ symbol: 'ACME', qty: 10 });
    await sql(`UPDATE zmodu_audit_log SET args = '{"symbol":"ACME","qty":1}' WHERE run_id = 'p1'`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 1, problem: 'altered' });
    // The same meaning written otherwise (keys reordered) is a change of the text that was hashed: altered too.
    await sql(`UPDATE zmodu_audit_log SET args = '{"qty":10,"symbol":"ACME"}' WHERE run_id = 'p1'`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 1, problem: 'altered' });
    await sql(`UPDATE zmodu_audit_log SET args = $1 WHERE run_id = 'p1'`, [args]);
    expect(await store.verify('acme')).toMatchObject({ ok: true });
    await sql(`UPDATE zmodu_audit_log SET result = NULL WHERE run_id = 'p2'`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 2, problem: 'altered' });
  });

  it('a DELETE of one entry: deleted, at the missing sequence number (also when the later ones are renumbered)', async () => {
    await writeTen();
    await sql(`DELETE FROM zmodu_audit_log WHERE tenant_id = 'acme' AND seq = 6`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 6, problem: 'deleted' });
    await sql(`UPDATE zmodu_audit_log SET seq = seq + 1000 WHERE tenant_id = 'acme' AND seq > 6`);
    await sql(`UPDATE zmodu_audit_log SET seq = seq - 1001 WHERE tenant_id = 'acme' AND seq > 1000`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 6, problem: 'deleted' });
    await sql(`DELETE FROM zmodu_audit_log WHERE tenant_id = 'acme' AND seq = 1`);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 1, problem: 'deleted' });
  });

  it('an INSERT of a forged entry in the middle (the later ones renumbered): inserted, at its sequence number', async () => {
    await writeTen();
    const prev = await hashAt(4);
    await sql(`UPDATE zmodu_audit_log SET seq = seq + 1000 WHERE tenant_id = 'acme' AND seq >= 5`);
    await sql(`UPDATE zmodu_audit_log SET seq = seq - 999 WHERE tenant_id = 'acme' AND seq > 1000`);
    await sql(
      `INSERT INTO zmodu_audit_log (run_id, agent, tenant_id, user_id, skill, action, decision, outcome, duration_ms, tokens, at, seq, prev_hash, hash)
       VALUES ('forged', 'trader', 'acme', 'u', 'order.submit', 'execute', 'allowed', 'ok', 1, 0, now(), 5, $1, $2)`,
      [prev, 'f'.repeat(64)],
    );
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 5, problem: 'inserted' });
  });

  it('an INSERT of a row without a chain after the chain began: inserted, where it sits', async () => {
    await sql(
      `INSERT INTO zmodu_audit_log (run_id, skill, action, decision, outcome, duration_ms, tokens, tenant_id) VALUES ('legacy', 's', 'read', 'allowed', 'ok', 1, 1, 'acme')`,
    );
    await writeTen();
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 10 }); // written before the chain: out of it
    await sql(
      `INSERT INTO zmodu_audit_log (run_id, skill, action, decision, outcome, duration_ms, tokens, tenant_id) VALUES ('forged', 's', 'read', 'allowed', 'ok', 1, 1, 'acme')`,
    );
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 11, problem: 'inserted' });
  });

  it('a row without a chain forged for a tenant whose chain began later, or has not begun, or with an id below every id: inserted', async () => {
    const forge = (tenant: string, id?: number) =>
      sql(
        `INSERT INTO zmodu_audit_log (${id === undefined ? '' : 'id, '}run_id, skill, action, decision, outcome, duration_ms, tokens, tenant_id)
         VALUES (${id === undefined ? '' : `${id}, `}'forged', 's', 'read', 'allowed', 'ok', 1, 1, $1)`,
        [tenant],
      );
    await writeTen();
    // initech has no chain yet: a row without one, written after the audit was chained, is forged.
    await forge('initech');
    expect(await store.verify('initech')).toEqual({ ok: false, firstBadSequence: 1, problem: 'inserted' });
    // A row of umbrella given an unused id after acme's chain began but before umbrella's did (ids burnt by refused writes).
    const [{ id: last }] = await sql(`SELECT max(id)::text AS id FROM zmodu_audit_log`);
    await sql(`SELECT setval(pg_get_serial_sequence('zmodu_audit_log', 'id'), $1)`, [Number(last) + 10]);
    await store.append([entry('late1', { tenantId: 'umbrella' }), entry('late2', { tenantId: 'umbrella' })]);
    await forge('umbrella', Number(last) + 5);
    expect(await store.verify('umbrella')).toEqual({ ok: false, firstBadSequence: 1, problem: 'inserted' });
    // An id no row the database numbered can have (ids start at 1).
    await forge('globex', -5);
    expect(await store.verify('globex')).toEqual({ ok: false, firstBadSequence: 1, problem: 'inserted' });
  });

  it('re-linking an entry past the one before it: re-linked, with or without its hash recomputed', async () => {
    await writeTen();
    const skipTo = await hashAt(4);
    await sql(`UPDATE zmodu_audit_log SET prev_hash = $1 WHERE tenant_id = 'acme' AND seq = 6`, [skipTo]);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 6, problem: 're-linked' });
    // An attacker who knows the algorithm recomputes the entry's hash (and the chain after it): the link still gives it away.
    const [row] = (await store.query({ runId: 'a6', tenantId: 'acme' })) as AuditEntry[];
    const [at] = await sql(
      `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t FROM zmodu_audit_log WHERE run_id = 'a6'`,
    );
    await sql(`UPDATE zmodu_audit_log SET hash = $1 WHERE tenant_id = 'acme' AND seq = 6`, [auditEntryHash(6, skipTo, row, at.t)]);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 6, problem: 're-linked' });
  });

  it('a timestamp with microseconds, set by the database, verifies once hashed as stored; later appends chain after it', async () => {
    await store.append([entry('first')]);
    const head = await hashAt(1);
    await sql(
      `INSERT INTO zmodu_audit_log (run_id, agent, tenant_id, user_id, skill, action, decision, outcome, duration_ms, tokens, at, seq, prev_hash, hash)
       VALUES ('db-time', 'trader', 'acme', 'u', 'market.quote', 'read', 'allowed', 'ok', 1, 2, clock_timestamp(), 2, $1, 'pending')`,
      [head],
    );
    const [at] = await sql(
      `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t FROM zmodu_audit_log WHERE run_id = 'db-time'`,
    );
    expect(at.t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const [row] = await store.query({ runId: 'db-time' });
    await sql(`UPDATE zmodu_audit_log SET hash = $1 WHERE run_id = 'db-time'`, [auditEntryHash(2, head, row, at.t)]);
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 2 });
    await store.append([entry('after', { at: new Date('2026-03-04T05:06:07.089Z') })]);
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 3 });
    const [after] = await store.query({ runId: 'after' });
    expect(after.at.toISOString()).toBe('2026-03-04T05:06:07.089Z');
  });

  it('a batch with an entry the database refuses: the others are chained without a gap, the bad one set aside', async () => {
    const log = new AgentAuditLog(store, { batchSize: 40, flushIntervalMs: 60_000 });
    for (let i = 0; i < 100; i++) log.record(entry(`r${i}`, i === 57 ? { tokens: 3e9 } : i % 4 === 0 ? { tenantId: 'globex' } : {}));
    await log.flush();
    expect(log.metrics()).toMatchObject({ written: 99, deadLettered: 1 });
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 74 });
    expect(await store.verify('globex')).toMatchObject({ ok: true, entries: 25 });
    await log.close();
  });

  it('a batch larger than one INSERT statement takes (2,500 entries) is written whole, in one chain', async () => {
    await store.append(Array.from({ length: 2500 }, (_, i) => entry(`big${i}`, { tenantId: i % 5 ? 'acme' : 'globex' })));
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 2000 });
    expect(await store.verify('globex')).toMatchObject({ ok: true, entries: 500 });
  });

  it('eight writers at once on two tenants leave one unbroken chain per tenant, no sequence number twice', async () => {
    const logs = Array.from(
      { length: 8 },
      () => new AgentAuditLog(new TypeOrmAuditLogStore(dataSource), { batchSize: 7, flushIntervalMs: 60_000 }),
    );
    await Promise.all(
      logs.map(async (log, w) => {
        for (let round = 0; round < 5; round++) {
          for (let i = 0; i < 12; i++) log.record(entry(`w${w}-${round}-${i}`, { tenantId: (w + i) % 3 ? 'acme' : 'globex' }));
          await log.flush();
        }
      }),
    );
    await Promise.all(logs.map((l) => l.close()));
    const counts = await sql(
      `SELECT tenant_id, count(*)::int AS n, count(DISTINCT seq)::int AS d, max(seq)::int AS m FROM zmodu_audit_log GROUP BY tenant_id ORDER BY tenant_id`,
    );
    const total = counts.reduce((s, c) => s + Number(c.n), 0);
    expect(total).toBe(8 * 5 * 12);
    for (const c of counts) expect([Number(c.d), Number(c.m)]).toEqual([Number(c.n), Number(c.n)]);
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: Number(counts[0].n) });
    expect(await store.verify('globex')).toMatchObject({ ok: true, entries: Number(counts[1].n) });
    expect(logs.reduce((s, l) => s + l.metrics().deadLettered, 0)).toBe(0);
  });

  it('twelve writers at once on three tenants and none, each batch in its own tenant order: no fork, no gap, no dead letter', async () => {
    const tenants = ['acme', 'globex', null, 'initech'];
    const logs = Array.from(
      { length: 12 },
      () => new AgentAuditLog(new TypeOrmAuditLogStore(dataSource), { batchSize: 9, flushIntervalMs: 60_000 }),
    );
    await Promise.all(
      logs.map(async (log, w) => {
        for (let round = 0; round < 8; round++) {
          // Writers meet the tenants in opposite orders within a batch (the rows of one INSERT are taken in that order).
          for (let i = 0; i < 9; i++) log.record(entry(`w${w}-${round}-${i}`, { tenantId: tenants[(w % 2 ? 8 - i : i) % 4] }));
          await log.flush();
        }
      }),
    );
    await Promise.all(logs.map((l) => l.close()));
    expect(logs.reduce((s, l) => s + l.metrics().deadLettered, 0)).toBe(0);
    const counts = await sql(
      `SELECT tenant_id, count(*)::int AS n, count(DISTINCT seq)::int AS d, max(seq)::int AS m FROM zmodu_audit_log GROUP BY tenant_id`,
    );
    expect(counts.reduce((s, c) => s + Number(c.n), 0)).toBe(12 * 8 * 9);
    for (const c of counts) {
      expect([Number(c.d), Number(c.m)]).toEqual([Number(c.n), Number(c.n)]);
      expect(await store.verify(c.tenant_id ?? null)).toMatchObject({ ok: true, entries: Number(c.n) });
    }
  });

  it('a writer whose heads moved between its read and its INSERT is refused by the index, then chains under the lock', async () => {
    await store.append([entry('first'), entry('first-null', { tenantId: null })]);
    const other = new TypeOrmAuditLogStore(dataSource);
    // Another writer appends after this writer read its heads, just before its optimistic INSERT (the one statement that
    // goes through dataSource.manager.query).
    const insert = dataSource.manager.query.bind(dataSource.manager);
    let interleaved = false;
    const spy = jest
      .spyOn(dataSource.manager, 'query')
      .mockImplementation(async (text: string, params?: unknown[] | Record<string, unknown>) => {
        if (!interleaved && text.startsWith('INSERT INTO zmodu_audit_log')) {
          interleaved = true;
          await other.append([entry('sneaked-in'), entry('sneaked-null', { tenantId: null })]);
        }
        return insert(text, params);
      });
    try {
      await store.append([entry('late'), entry('late-null', { tenantId: null })]);
    } finally {
      spy.mockRestore();
    }
    expect(interleaved).toBe(true);
    const order = await sql(`SELECT run_id, seq::int AS seq FROM zmodu_audit_log WHERE tenant_id = 'acme' ORDER BY seq`);
    expect(order.map((r) => [r.run_id, Number(r.seq)])).toEqual([
      ['first', 1],
      ['sneaked-in', 2],
      ['late', 3],
    ]);
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 3 });
    expect(await store.verify(null)).toMatchObject({ ok: true, entries: 3 });
  });

  /** Count the statements that read chain heads outside the lock (readHeads; the locked read orders by `seq`) while `fn` runs. */
  const headReads = async (fn: () => Promise<void>): Promise<number> => {
    const query = dataSource.query.bind(dataSource);
    let reads = 0;
    // EntityManager.query (also a transaction's) calls dataSource.query with its query runner: every argument passed on.
    const spy = jest.spyOn(dataSource, 'query').mockImplementation(async (...args: Parameters<DataSource['query']>) => {
      if (/ORDER BY a\.seq DESC LIMIT 1/.test(args[0])) reads++;
      return query(...args);
    });
    try {
      await fn();
    } finally {
      spy.mockRestore();
    }
    return reads;
  };

  it('a store chains its next batch after the head it wrote without reading it; a head moved by another store is refused, then read', async () => {
    expect(await headReads(() => store.append([entry('a1'), entry('n1', { tenantId: null })]))).toBe(1);
    expect(await headReads(() => store.append([entry('a2'), entry('n2', { tenantId: null })]))).toBe(0);
    const other = new TypeOrmAuditLogStore(dataSource);
    expect(await headReads(() => other.append([entry('b1')]))).toBe(1);
    // This store still remembers a2 as acme's head: its INSERT at seq 3 is refused by the index, and it chains after b1.
    const transaction = jest.spyOn(dataSource, 'transaction');
    try {
      await store.append([entry('a3')]);
      expect(transaction).toHaveBeenCalledTimes(1);
    } finally {
      transaction.mockRestore();
    }
    // Then it remembers a3 again: no read, and the chain goes on.
    expect(await headReads(() => store.append([entry('a4'), entry('n3', { tenantId: null })]))).toBe(0);
    const order = await sql(`SELECT run_id, seq::int AS seq FROM zmodu_audit_log WHERE tenant_id = 'acme' ORDER BY seq`);
    expect(order.map((r) => [r.run_id, Number(r.seq)])).toEqual([
      ['a1', 1],
      ['a2', 2],
      ['b1', 3],
      ['a3', 4],
      ['a4', 5],
    ]);
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 5 });
    expect(await store.verify(null)).toMatchObject({ ok: true, entries: 3 });
  });

  it('the head of the chain without a tenant is read by its number (10 after 9), so a new store past it chains without the lock', async () => {
    await store.append(Array.from({ length: 12 }, (_, i) => entry(`n${i}`, { tenantId: null })));
    const fresh = new TypeOrmAuditLogStore(dataSource);
    const transaction = jest.spyOn(dataSource, 'transaction');
    try {
      expect(await headReads(() => fresh.append([entry('n12', { tenantId: null }), entry('a1')]))).toBe(1);
      expect(transaction).not.toHaveBeenCalled();
    } finally {
      transaction.mockRestore();
    }
    expect(await store.verify(null)).toMatchObject({ ok: true, entries: 13 });
  });

  it('entries deleted from the end of a chain are reported at the next write of the store that wrote them', async () => {
    await writeTen();
    await sql(`DELETE FROM zmodu_audit_log WHERE tenant_id = 'acme' AND seq >= 9`);
    // A deleted tail leaves no trace in what is left...
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 8 });
    // ...until the writer that remembers entry 10 links the next entry to it.
    await store.append([entry('a11')]);
    expect(await store.verify('acme')).toEqual({ ok: false, firstBadSequence: 9, problem: 'deleted' });
    expect(await store.verify('globex')).toMatchObject({ ok: true, entries: 4 });
    // A store that never wrote acme (or forgot its heads) chains after what it reads.
    await sql(`DELETE FROM zmodu_audit_log WHERE tenant_id = 'acme' AND seq >= 9`);
    store.forgetHeads();
    await store.append([entry('a9')]);
    expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 9 });
  });

  it('rememberHeads bounds the heads a store keeps (the least recently written tenant goes first); 0 reads every time', async () => {
    const two = new TypeOrmAuditLogStore(dataSource, { rememberHeads: 2 });
    for (const t of ['t1', 't2', 't3']) expect(await headReads(() => two.append([entry(`${t}-1`, { tenantId: t })]))).toBe(1);
    expect(await headReads(() => two.append([entry('t3-2', { tenantId: 't3' })]))).toBe(0);
    expect(await headReads(() => two.append([entry('t2-2', { tenantId: 't2' })]))).toBe(0);
    expect(await headReads(() => two.append([entry('t1-2', { tenantId: 't1' })]))).toBe(1); // forgotten
    expect(await headReads(() => two.append([entry('t2-3', { tenantId: 't2' })]))).toBe(0);
    expect(await headReads(() => two.append([entry('t3-3', { tenantId: 't3' })]))).toBe(1); // forgotten for t1
    const none = new TypeOrmAuditLogStore(dataSource, { rememberHeads: 0 });
    expect(await headReads(() => none.append([entry('t1-3', { tenantId: 't1' })]))).toBe(1);
    expect(await headReads(() => none.append([entry('t1-4', { tenantId: 't1' })]))).toBe(1);
    for (const t of ['t1', 't2', 't3']) expect(await store.verify(t)).toMatchObject({ ok: true });
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => new TypeOrmAuditLogStore(dataSource, { rememberHeads: bad })).toThrow(/rememberHeads must be a whole number/);
    }
  });

  it('a reader paging one tenant by id while eight writers append misses no entry of it and sees none twice', async () => {
    // Ids are handed out at INSERT and seen at COMMIT, but one tenant's entries commit in id order: a writer chained
    // after an uncommitted head is held by the unique (tenant, seq) index until that commits, then refused.
    const writers = Array.from({ length: 8 }, () => new TypeOrmAuditLogStore(dataSource));
    let writing = true;
    const seen: string[] = [];
    let afterId: string | undefined;
    const readPage = async () => {
      const page = await store.query({ tenantId: 'shared', limit: 1000, ...(afterId !== undefined ? { afterId } : {}) });
      for (const r of page) seen.push(r.runId);
      if (page.length > 0) afterId = page[page.length - 1].id;
      return page.length;
    };
    const reader = (async () => {
      while (writing) await readPage();
      while ((await readPage()) > 0);
    })();
    await Promise.all(
      writers.map(async (w, i) => {
        for (let round = 0; round < 5; round++)
          await w.append(Array.from({ length: 100 }, (_, k) => entry(`w${i}-${round}-${k}`, { tenantId: i % 2 ? 'shared' : `own${i}` })));
      }),
    );
    writing = false;
    await reader;
    expect(seen).toHaveLength(4 * 5 * 100);
    expect(new Set(seen).size).toBe(seen.length);
    expect(await store.verify('shared')).toMatchObject({ ok: true, entries: 2000 });
  });

  it('verifyAuditChain refuses a store that keeps no chain, saying what to use', async () => {
    const plain: AuditLogStore = { append: async () => undefined, query: async () => [] };
    await expect(verifyAuditChain(plain, 'acme')).rejects.toThrow(/keeps no hash chain.*TypeOrmAuditLogStore/);
  });
  describe('intents: entries written in the transaction of a staged execution', () => {
    const intentCount = async () => Number((await sql('SELECT count(*)::text AS n FROM zmodu_audit_intents'))[0].n);
    const inTransaction = async (
      write: (tx: { query: (q: string, p?: readonly unknown[]) => Promise<unknown> }) => Promise<void>,
      commit: boolean,
    ) => {
      const runner = dataSource.createQueryRunner();
      await runner.startTransaction();
      try {
        await write({ query: (q, p) => runner.query(q, p ? [...p] : []) });
        if (commit) await runner.commitTransaction();
        else await runner.rollbackTransaction();
      } finally {
        await runner.release();
      }
    };

    it('commit with the transaction or not at all, and are chained once: by a flush, or by the next start after a crash', async () => {
      const audit = new AgentAuditLog(store, { flushIntervalMs: 60_000 });
      await inTransaction((tx) => audit.recordWithin(tx, entry('kept', { proposalId: 'p1', approvers: ['lee'] })), true);
      await inTransaction((tx) => audit.recordWithin(tx, entry('rolled-back', { proposalId: 'p2' })), false);
      expect(await intentCount()).toBe(1);
      expect(await sql('SELECT run_id FROM zmodu_audit_log')).toEqual([]);
      await audit.flush();
      expect(await intentCount()).toBe(0);
      const rows = await sql(`SELECT run_id, proposal_id, approvers::text, seq::text FROM zmodu_audit_log`);
      expect(rows).toEqual([{ run_id: 'kept', proposal_id: 'p1', approvers: expect.stringContaining('lee'), seq: '1' }]);
      // A process that died after its commit, before any flush: its intent waits in the table; the next start chains it.
      await inTransaction((tx) => new AgentAuditLog(store, { flushIntervalMs: 60_000 }).recordWithin(tx, entry('orphan')), true);
      const next = new AgentAuditLog(store, { flushIntervalMs: 60_000 });
      await next.flush();
      expect((await sql(`SELECT run_id FROM zmodu_audit_log ORDER BY seq`)).map((r) => r.run_id)).toEqual(['kept', 'orphan']);
      expect(await store.verify('acme')).toMatchObject({ ok: true });
      await Promise.all([audit.close(), next.close()]);
    });

    it('an intent the database refuses for what it holds is set aside; the intents behind it are chained (attack: one poisoned intent blocking every later one)', async () => {
      for (let i = 0; i < 6; i++) await inTransaction((tx) => store.writeIntent(tx, entry(`p${i}`, i === 2 ? { tokens: 3e9 } : {})), true);
      const audit = new AgentAuditLog(store, { flushIntervalMs: 60_000 });
      await audit.flush();
      expect(await intentCount()).toBe(0);
      expect((await sql(`SELECT run_id FROM zmodu_audit_log ORDER BY seq`)).map((r) => r.run_id)).toEqual(['p0', 'p1', 'p3', 'p4', 'p5']);
      const letters = await store.deadLetters();
      expect(letters.map((l) => [l.entry.runId, l.entry.tokens])).toEqual([['p2', 3e9]]);
      expect(letters[0].error).toMatch(/out of range/);
      expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 5 });
      await audit.close();
    });

    it('chains each intent exactly once when many flushes of many stores move them at the same time, beside plain batches', async () => {
      for (let i = 0; i < 60; i++)
        await inTransaction((tx) => store.writeIntent(tx, entry(`i${i}`, { tenantId: i % 3 ? 'acme' : 'globex' })), true);
      const stores = Array.from({ length: 6 }, () => new TypeOrmAuditLogStore(dataSource));
      await Promise.all([
        ...stores.map((s) => s.moveIntents(7).then(async (n) => n + (await s.moveIntents(100)))),
        store.append([entry('plain-1'), entry('plain-2', { tenantId: 'globex' })]),
      ]);
      expect(await intentCount()).toBe(0);
      const runIds = (await sql(`SELECT run_id FROM zmodu_audit_log`)).map((r) => r.run_id);
      expect(runIds.filter((r) => r.startsWith('i')).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `i${i}`).sort());
      expect(runIds).toHaveLength(62);
      for (const tenant of ['acme', 'globex']) expect(await store.verify(tenant)).toMatchObject({ ok: true });
    });
  });
});
