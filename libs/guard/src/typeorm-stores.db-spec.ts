import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AgentAuditLog } from './audit/agent-audit-log';
import { AuditEntry } from './audit/audit-entry';
import { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
import { ZMODU_GUARD_MIGRATIONS } from './guard.migrations';
import { GuardModule } from './guard.module';
import { TokenQuota } from './quota/token-quota';
import { TypeOrmTokenQuotaStore } from './quota/typeorm-token-quota.store';
import { auditLogStoreContract, sampleAuditEntry, tokenQuotaStoreContract } from './testing';

describe('TypeORM stores on PostgreSQL', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource(await db.options({ migrations: ZMODU_GUARD_MIGRATIONS }));
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const clean = async () => {
    await dataSource.query('TRUNCATE zmodu_audit_log, zmodu_audit_dead_letters, zmodu_token_usage, zmodu_token_usage_users');
  };

  describe('TypeOrmAuditLogStore (contract)', () => {
    auditLogStoreContract(async () => {
      await clean();
      return { store: new TypeOrmAuditLogStore(dataSource) };
    });
  });

  describe('AgentAuditLog on the database', () => {
    const entry = sampleAuditEntry;
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);
    const written = async () =>
      ((await dataSource.query('SELECT run_id FROM zmodu_audit_log ORDER BY id')) as Array<{ run_id: string }>).map((r) => r.run_id);

    beforeEach(clean);

    it('the database itself refuses a NUL character in a text column (why entries are cleaned)', async () => {
      await expect(new TypeOrmAuditLogStore(dataSource).append([entry('nul', { userId: 'eve\u0000' })])).rejects.toThrow();
      expect(await written()).toEqual([]);
    });

    it('writes a hundred entries, one with a NUL in its user, cleaned to U+FFFD', async () => {
      const log = new AgentAuditLog(new TypeOrmAuditLogStore(dataSource), { batchSize: 100, flushIntervalMs: 60_000 });
      for (const id of ids(100)) log.record(entry(id, id === 'r42' ? { userId: 'eve\u0000root\ud800' } : {}));
      await log.flush();
      expect(await written()).toEqual(ids(100));
      const [row] = await log.query({ runId: 'r42' });
      expect(row.userId).toBe('eve\ufffdroot\ufffd');
      expect(log.metrics()).toMatchObject({ sanitized: 1, deadLettered: 0, written: 100 });
      await log.close();
    });

    it('one entry the database refuses among a hundred: ninety-nine written, one set aside in zmodu_audit_dead_letters', async () => {
      const store = new TypeOrmAuditLogStore(dataSource);
      const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
      // 3e9 does not fit the integer column: PostgreSQL refuses the row ("integer out of range").
      for (const id of ids(100)) log.record(entry(id, id === 'r57' ? { tokens: 3e9 } : {}));
      await log.flush();
      expect(await written()).toEqual(ids(100).filter((id) => id !== 'r57'));
      expect(log.deadLettered).toBe(1);
      const letters = await store.deadLetters();
      expect(letters.map((l) => [l.entry.runId, l.entry.tokens])).toEqual([['r57', 3e9]]);
      expect(letters[0].error).toMatch(/out of range/);
      await log.close();
    });

    it('one entry a store wrapper refuses among a hundred: ninety-nine written, one set aside, later entries written', async () => {
      const inner = new TypeOrmAuditLogStore(dataSource);
      const store = Object.assign(Object.create(inner) as TypeOrmAuditLogStore, {
        append: async (entries: readonly AuditEntry[]) => {
          // As PostgreSQL says it: SQLSTATE 22021, a value the column can never hold.
          if (entries.some((x) => x.runId === 'r13'))
            throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
          return inner.append(entries);
        },
      });
      const log = new AgentAuditLog(store, { batchSize: 32, flushIntervalMs: 60_000 });
      for (const id of ids(100)) log.record(entry(id));
      await log.flush();
      log.record(entry('later', { tenantId: 'other' }));
      await log.flush();
      expect(await written()).toEqual([...ids(100).filter((id) => id !== 'r13'), 'later']);
      expect((await inner.deadLetters()).map((l) => l.entry.runId)).toEqual(['r13']);
      expect(log.metrics()).toMatchObject({ deadLettered: 1, written: 100, pending: 0, dropped: 0 });
      await log.close();
    });

    it('an entry whose write fails while reads answer stays queued and arrives once when the store recovers (attack: a trigger failing every insert, taken for a bad entry)', async () => {
      await dataSource.query(`CREATE FUNCTION e2e_audit_maintenance() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'zmodu_audit_log is locked for maintenance'; END $$`);
      await dataSource.query(
        `CREATE TRIGGER e2e_audit_maintenance BEFORE INSERT ON zmodu_audit_log FOR EACH ROW EXECUTE FUNCTION e2e_audit_maintenance()`,
      );
      const store = new TypeOrmAuditLogStore(dataSource);
      const log = new AgentAuditLog(store, { batchSize: 10, flushIntervalMs: 20, maxRetryIntervalMs: 80 });
      try {
        for (const id of ids(25)) log.record(entry(id));
        await expect(log.flush()).rejects.toThrow(/locked for maintenance/);
        // The store still answers reads, and its dead letters take writes: neither makes the entries bad ones.
        expect(await store.query({ limit: 10 })).toEqual([]);
        expect(log.metrics()).toMatchObject({ pending: 25, deadLettered: 0, dropped: 0, written: 0 });
        expect(log.metrics().failedWrites).toBeGreaterThan(0);
        // Retried on the log's own timer, with a growing wait, while the store keeps failing.
        const failed = log.metrics().failedWrites;
        for (let i = 0; i < 100 && log.metrics().failedWrites < failed + 2; i++) await new Promise((r) => setTimeout(r, 20));
        expect(log.metrics().failedWrites).toBeGreaterThanOrEqual(failed + 2);
        // Doubled from flushIntervalMs (20 ms) at each failure: after three or more, capped at maxRetryIntervalMs.
        expect(log.metrics().retryInMs).toBe(80);
        expect(await written()).toEqual([]);
      } finally {
        await dataSource.query('DROP TRIGGER e2e_audit_maintenance ON zmodu_audit_log');
        await dataSource.query('DROP FUNCTION e2e_audit_maintenance()');
      }
      // The store recovers: the next retry writes every entry, once, in order; none was set aside.
      for (let i = 0; i < 200 && log.metrics().pending > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await written()).toEqual(ids(25));
      expect(await store.deadLetters()).toEqual([]);
      expect(log.metrics()).toMatchObject({ pending: 0, written: 25, deadLettered: 0, dropped: 0 });
      expect(await store.verify('acme')).toMatchObject({ ok: true, entries: 25 });
      await log.close();
    });

    it('a trigger that refuses one entry for good (check_violation) has it set aside; the others are written', async () => {
      await dataSource.query(`CREATE FUNCTION e2e_audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.run_id = 'r7' THEN RAISE EXCEPTION 'run r7 may not be audited' USING ERRCODE = 'check_violation'; END IF;
        RETURN NEW; END $$`);
      await dataSource.query(
        `CREATE TRIGGER e2e_audit_refuse BEFORE INSERT ON zmodu_audit_log FOR EACH ROW EXECUTE FUNCTION e2e_audit_refuse()`,
      );
      try {
        const store = new TypeOrmAuditLogStore(dataSource);
        const log = new AgentAuditLog(store, { batchSize: 100, flushIntervalMs: 60_000 });
        for (const id of ids(20)) log.record(entry(id));
        await log.flush();
        expect(await written()).toEqual(ids(20).filter((id) => id !== 'r7'));
        expect((await store.deadLetters()).map((l) => l.entry.runId)).toEqual(['r7']);
        expect(log.metrics()).toMatchObject({ pending: 0, written: 19, deadLettered: 1 });
        await log.close();
      } finally {
        await dataSource.query('DROP TRIGGER e2e_audit_refuse ON zmodu_audit_log');
        await dataSource.query('DROP FUNCTION e2e_audit_refuse()');
      }
    });

    it('an outage of the store loses nothing: every entry is written once it is back', async () => {
      const inner = new TypeOrmAuditLogStore(dataSource);
      let down = true;
      const fail = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      const store = {
        append: (entries: readonly AuditEntry[]) => (down ? fail() : inner.append(entries)),
        query: (f: Parameters<TypeOrmAuditLogStore['query']>[0]) => (down ? fail() : inner.query(f)),
        setAside: (l: Parameters<TypeOrmAuditLogStore['setAside']>[0]) => (down ? fail() : inner.setAside(l)),
        deadLetters: (n?: number) => (down ? fail() : inner.deadLetters(n)),
      };
      const log = new AgentAuditLog(store, { batchSize: 25, flushIntervalMs: 60_000 });
      for (const id of ids(60)) log.record(entry(id));
      await expect(log.flush()).rejects.toThrow('ECONNREFUSED');
      for (const id of ids(100).slice(60)) log.record(entry(id));
      await expect(log.flush()).rejects.toThrow('ECONNREFUSED');
      expect(log.pending).toBe(100);
      down = false;
      await log.close();
      expect(await written()).toEqual(ids(100));
      expect(await inner.deadLetters()).toEqual([]);
      expect(log.metrics()).toMatchObject({ deadLettered: 0, dropped: 0, pending: 0, written: 100 });
    });
  });

  describe('TokenQuota on the database', () => {
    beforeEach(clean);
    const key = { tenantId: 'acme', agent: 'trader', userId: 'alice' };

    it('charges refused by a failing store stay queued and arrive once; one it can never hold does not hold them up (attack: a charge with a NUL tenant id ahead of them in the queue)', async () => {
      const store = new TypeOrmTokenQuotaStore(dataSource);
      const quota = new TokenQuota(store, { retryIntervalMs: 60_000 });
      await dataSource.query(`CREATE FUNCTION e2e_quota_maintenance() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'zmodu_token_usage is locked for maintenance'; END $$`);
      await dataSource.query(
        `CREATE TRIGGER e2e_quota_maintenance BEFORE INSERT ON zmodu_token_usage FOR EACH ROW EXECUTE FUNCTION e2e_quota_maintenance()`,
      );
      try {
        await quota.chargeQuietly({ tenantId: 'bad\u0000tenant', agent: 'trader' }, 5);
        for (let i = 0; i < 3; i++) await quota.chargeQuietly(key, 10);
        await quota.chargeQuietly({ tenantId: 'globex', agent: 'trader' }, 7);
        await expect(quota.flushCharges()).rejects.toThrow(/locked for maintenance/);
        expect(await store.used(key, quota.currentPeriod())).toBe(0); // reads answer; nothing written
      } finally {
        await dataSource.query('DROP TRIGGER e2e_quota_maintenance ON zmodu_token_usage');
        await dataSource.query('DROP FUNCTION e2e_quota_maintenance()');
      }
      await quota.flushCharges();
      const period = quota.currentPeriod();
      expect(await store.used({ tenantId: 'acme', agent: 'trader' }, period)).toBe(30);
      expect(await store.used(key, period)).toBe(30);
      expect(await store.used({ tenantId: 'globex', agent: 'trader' }, period)).toBe(7);
      expect(quota.metrics()).toMatchObject({ pendingCharges: 0, rejectedCharges: 1, rejectedTokens: 5, droppedCharges: 0 });
      await quota.close();
      expect(await store.used({ tenantId: 'acme', agent: 'trader' }, period)).toBe(30); // once
    });

    it('a count no counter can hold (a hostile model server reporting 1e19 tokens) is charged as the most it holds, not queued forever', async () => {
      const store = new TypeOrmTokenQuotaStore(dataSource);
      const quota = new TokenQuota(store, { retryIntervalMs: 60_000 });
      await quota.chargeQuietly(key, 1e19);
      await quota.chargeQuietly(key, 1e19);
      expect(quota.metrics()).toMatchObject({ pendingCharges: 0, queuedCharges: 0, rejectedCharges: 0 });
      expect(await store.used(key, quota.currentPeriod())).toBe(Number.MAX_SAFE_INTEGER);
      expect(await quota.charge({ tenantId: 'acme', agent: 'trader' }, 1)).toBe(Number.MAX_SAFE_INTEGER);
      await quota.close();
    });
  });

  describe('TypeOrmTokenQuotaStore (contract)', () => {
    tokenQuotaStoreContract(async () => {
      await clean();
      return { store: new TypeOrmTokenQuotaStore(dataSource) };
    });
  });
});

describe('GuardModule on a database', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  async function startApp() {
    const options = await db.options({ migrations: ZMODU_GUARD_MIGRATIONS, migrationsRun: true });
    @Module({ imports: [TypeOrmModule.forRoot(options), GuardModule.forRoot({ quota: { defaultLimit: 100, period: 'total' } })] })
    class AppModule {}
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await app.init();
    return app;
  }

  it('keeps the token quota across a new app instance on the same database', async () => {
    const key = { tenantId: 'acme', agent: 'trader' };
    const first = await startApp();
    await first.get(TokenQuota).charge(key, 70);
    expect((await first.get(TokenQuota).check(key)).allowed).toBe(true);
    await first.close();

    const second = await startApp();
    const quota = second.get(TokenQuota);
    expect(await quota.check(key)).toMatchObject({ used: 70, remaining: 30, allowed: true });
    await quota.charge(key, 30);
    expect((await quota.check(key)).allowed).toBe(false);
    await second.close();
  });

  it('flushes pending audit entries at shutdown, so a new instance can read them', async () => {
    const first = await startApp();
    first.get(AgentAuditLog).record(sampleAuditEntry('shutdown-run'));
    expect(first.get(AgentAuditLog).pending).toBe(1);
    await first.close();
    const second = await startApp();
    expect(await second.get(AgentAuditLog).query({ runId: 'shutdown-run' })).toHaveLength(1);
    await second.close();
  });
});
