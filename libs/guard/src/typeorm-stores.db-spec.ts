import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { AgentAuditLog } from './audit/agent-audit-log';
import { AuditEntry } from './audit/audit-entry';
import { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
import { ZMODU_GUARD_ENTITIES, ZMODU_GUARD_MIGRATIONS } from './guard.entities';
import { GuardModule } from './guard.module';
import { TokenQuota } from './quota/token-quota';
import { TypeOrmTokenQuotaStore } from './quota/typeorm-token-quota.store';
import { auditLogStoreContract, sampleAuditEntry, tokenQuotaStoreContract } from './testing';

describe('TypeORM stores on PostgreSQL', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = new DataSource(await db.options({ entities: ZMODU_GUARD_ENTITIES, migrations: ZMODU_GUARD_MIGRATIONS }));
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
          if (entries.some((x) => x.runId === 'r13')) throw new Error('invalid byte sequence for encoding "UTF8": 0x00');
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
    const options = await db.options({ entities: ZMODU_GUARD_ENTITIES, migrations: ZMODU_GUARD_MIGRATIONS, migrationsRun: true });
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
