import { Injectable, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentAuditLog, AuditEntry, AuditLogStore, Guard, GuardModule, verifyAuditChain, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { TypeOrmAuditLogStore } from '@zmodu/guard/internal';
import { createSkillContext, Skill, SkillDispatcher, SkillsModule } from '@zmodu/skills';
import { DataSource } from 'typeorm';
import { insertAuditRows } from '../libs/guard/src/audit/typeorm-audit-log.store';
import { BenchServer, withBenchDatabase } from './bench-database';
import { msPerRun } from './measure';
import { Row } from './report';

/** Calls per measured run: each run dispatches them, then flushes the audit (one batch: the write is in the cost). */
const CALLS = 100;

@Injectable()
class BenchQuoteSkills {
  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'A quote',
    tenantScoped: true,
    parameters: { type: 'object', properties: { symbol: { type: 'string' }, venue: { type: 'string' } }, required: ['symbol'] },
  })
  quote(args: { symbol: string }) {
    // A typical small result: the audit keeps and hashes the arguments and this value.
    return { symbol: args.symbol, price: 101.25, currency: 'USD', asOf: '2026-12-01T09:30:00Z', source: 'bench' };
  }
}

/**
 * The audit write without the chain: the same plain-SQL multi-row INSERT of the same columns (arguments and result
 * included), but no transaction, no lock, no head read and no hash. What separates the two is the chain's cost alone.
 */
class UnchainedAuditLogStore extends TypeOrmAuditLogStore {
  constructor(private readonly ds: DataSource) {
    super(ds);
  }

  override async append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await insertAuditRows(this.ds.manager, entries);
  }
}

/**
 * The audit chain's cost: dispatches per second (each dispatch audited, the batch written to PostgreSQL) with the chained
 * audit store (a transaction, the tenant's advisory lock, its head read, SHA-256 per entry) against the unchained write.
 */
export async function runAuditChainBench(log: (line: string) => void, server: BenchServer | null): Promise<{ rows: Row[] }> {
  if (!server) return { rows: [] };
  const rows: Row[] = [];
  await withBenchDatabase(server, 'za', async (url) => {
    const apps: INestApplicationContext[] = [];
    try {
      const start = async (store: (ds: DataSource) => AuditLogStore) => {
        @Module({
          imports: [
            TypeOrmModule.forRoot({
              type: 'postgres',
              url,
              migrations: ZMODU_GUARD_MIGRATIONS,
              migrationsRun: true,
            }),
            GuardModule.forRootAsync({
              inject: [DataSource],
              useFactory: (ds: DataSource) => ({ auditStore: store(ds), quotaStore: 'memory', audit: { flushIntervalMs: 60_000 } }),
            }),
            SkillsModule.forRoot(),
          ],
          providers: [BenchQuoteSkills],
        })
        class BenchAuditModule {}
        const app = await NestFactory.createApplicationContext(BenchAuditModule, { logger: false });
        apps.push(app);
        return app;
      };
      const chainedApp = await start((ds) => new TypeOrmAuditLogStore(ds));
      const unchainedApp = await start((ds) => new UnchainedAuditLogStore(ds));
      const guard = new Guard({ allow: ['market.quote'] });
      const calls = (app: INestApplicationContext, tenantId: string) => {
        const dispatcher = app.get(SkillDispatcher);
        const audit = app.get(AgentAuditLog);
        return async () => {
          let ok = 0;
          for (let i = 0; i < CALLS; i++) {
            const ctx = createSkillContext({ guard, tenantId, userId: 'bench', agent: 'bench' });
            if ((await dispatcher.dispatch(ctx, 'market.quote', { symbol: 'ACME', venue: 'XNYS' })).ok) ok++;
          }
          await audit.flush();
          return ok;
        };
      };
      const ms = await msPerRun(
        { chained: calls(chainedApp, 'chained'), unchained: calls(unchainedApp, 'unchained') },
        { warmupRounds: 2, rounds: 9, runsPerRound: 10 },
      );
      const verdict = await verifyAuditChain(chainedApp.get(DataSource), 'chained');
      if (!verdict.ok) throw new Error(`the bench's audit chain does not verify: ${JSON.stringify(verdict)}`);
      const perCall = { chained: ms.chained / CALLS, unchained: ms.unchained / CALLS };
      const ratio = perCall.chained / perCall.unchained;
      log(
        `audit chain: ${(1000 / perCall.chained).toFixed(0)} dispatches/s chained, ${(1000 / perCall.unchained).toFixed(0)} unchained ` +
          `(${(perCall.chained * 1000).toFixed(1)} µs vs ${(perCall.unchained * 1000).toFixed(1)} µs a call, batches of ${CALLS}, ${ratio.toFixed(2)}x; ` +
          `${verdict.entries} chained entries verified)`,
      );
      rows.push({
        name: `dispatch with its audit entry written in batches of ${CALLS}, chained audit vs unchained, PostgreSQL (ratio = cost per call)`,
        value: perCall.chained,
        unit: 'ms/call',
        baseline: perCall.unchained,
        target: { text: 'ratio <= 1.3', met: ratio <= 1.3 },
        note: `${(1000 / perCall.chained).toFixed(0)} vs ${(1000 / perCall.unchained).toFixed(0)} dispatches/s`,
      });
    } finally {
      for (const app of apps) await app.close();
    }
  });
  return { rows };
}
