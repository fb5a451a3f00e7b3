import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule, ZMODU_GUARD_ENTITIES, ZMODU_GUARD_MIGRATIONS } from './libs/guard/src';
import { PipelineModule, ProposalPipeline, ZMODU_PIPELINE_ENTITIES, ZMODU_PIPELINE_MIGRATIONS } from './libs/pipeline/src';
import { SkillsModule } from './libs/skills/src';
import { ORDER_RULES, orderExecutors, PipelineEffects1764461200000 } from './test/support/pipeline-app';
import { DataSource } from 'typeorm';
import { Client } from 'pg';
(async () => {
  const url = process.argv[2];
  @Module({ imports: [TypeOrmModule.forRoot({ type: 'postgres', url, entities: [...ZMODU_GUARD_ENTITIES, ...ZMODU_PIPELINE_ENTITIES], migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, PipelineEffects1764461200000], migrationsRun: true }), GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }), SkillsModule.forRoot(), PipelineModule.forRoot({ executors: orderExecutors(), ...ORDER_RULES, recoveryIntervalMs: 0 })] })
  class M {}
  const app = await NestFactory.createApplicationContext(M, { logger: false });
  const p = app.get(ProposalPipeline) as unknown as { decideStep: Function; execute: Function; submit: Function };
  const ds = app.get<DataSource>(getDataSourceToken());
  const c = new Client({ connectionString: url }); await c.connect();
  const lead = { tenantId: 'acme', userId: 'lee', permissions: ['desk:lead', 'approval:decide'] };
  const t = () => process.hrtime.bigint();
  const acc: Record<string, bigint> = { submit: 0n, decideStep: 0n, execute: 0n, typeormSelect1: 0n, pgSelect1: 0n, typeormTx: 0n };
  const N = 300;
  for (let i = 0; i < N + 50; i++) {
    const m = i >= 50;
    let a = t(); const s = await p.submit({ tenantId: 'acme', userId: 'alice' }, { action: 'order.submit', payload: { a: 1 }, amount: 20000 }); if (m) acc.submit += t() - a;
    a = t(); const d = await (p as any).decideAtOnce(lead, s.proposalId, "approve", "x"); if (!d) throw new Error("fast path missed"); if (m) acc.decideStep += t() - a;
    a = t(); await p.execute(s.proposalId); if (m) acc.execute += t() - a;
    a = t(); await ds.query('SELECT 1'); if (m) acc.typeormSelect1 += t() - a;
    a = t(); await c.query('SELECT 1'); if (m) acc.pgSelect1 += t() - a;
    a = t(); await ds.transaction((mm) => mm.query('SELECT 1')); if (m) acc.typeormTx += t() - a;
  }
  for (const [k, v] of Object.entries(acc)) console.log(k, (Number(v) / N / 1000).toFixed(0), 'us');
  await c.end(); await app.close();
})();
