import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/test-database';
import { AgentAuditLog } from './audit/agent-audit-log';
import { TypeOrmAuditLogStore } from './audit/typeorm-audit-log.store';
import { ZMODU_GUARD_ENTITIES, ZMODU_GUARD_MIGRATIONS } from './guard.entities';
import { GuardModule } from './guard.module';
import { TokenQuota } from './quota/token-quota';
import { TypeOrmTokenQuotaStore } from './quota/typeorm-token-quota.store';
import { auditLogStoreContract, tokenQuotaStoreContract } from './testing';

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
    await dataSource.query('TRUNCATE zmodu_audit_log, zmodu_token_usage');
  };

  describe('TypeOrmAuditLogStore (contract)', () => {
    auditLogStoreContract(async () => {
      await clean();
      return { store: new TypeOrmAuditLogStore(dataSource) };
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
    first.get(AgentAuditLog).record({
      runId: 'shutdown-run', agent: 'trader', tenantId: 'acme', userId: 'u', skill: 'market.quote', action: 'read',
      decision: 'allowed', cause: null, outcome: 'ok', durationMs: 1, tokens: 2, at: new Date(),
    });
    expect(first.get(AgentAuditLog).pending).toBe(1);
    await first.close();
    const second = await startApp();
    expect(await second.get(AgentAuditLog).query({ runId: 'shutdown-run' })).toHaveLength(1);
    await second.close();
  });
});
