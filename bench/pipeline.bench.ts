import { randomUUID } from 'node:crypto';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { PipelineModule, PipelineModuleOptions, ProposalPipeline, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { SkillsModule } from '@zmodu/skills';
import { Client } from 'pg';
import { FixtureStagedSkills, ORDER_RULES, PipelineEffects1764461200000 } from '../libs/pipeline/src/__fixtures__/pipeline-app';
import { BenchServer, withBenchDatabase } from './bench-database';
import { msPerRun } from './measure';
import { Row } from './report';

/**
 * The pipeline's cost per state change against one committed INSERT on the same PostgreSQL:
 * a proposal that executes without a human (2 state changes: proposed and approved, executed)
 * and one a human approves (3: pending, approved, executed).
 */
export async function runPipelineBench(log: (line: string) => void, server: BenchServer | null): Promise<{ rows: Row[] }> {
  if (!server) return { rows: [] };
  const rows: Row[] = [];
  await withBenchDatabase(server, 'zp', async (url) => {
    const direct = new Client({ connectionString: url });
    let app: INestApplicationContext | undefined;
    try {
      @Module({
        imports: [
          TypeOrmModule.forRoot({
            type: 'postgres',
            url: url,
            migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, PipelineEffects1764461200000],
            migrationsRun: true,
          }),
          GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
          SkillsModule.forRoot(),
          PipelineModule.forRoot({ ...ORDER_RULES, recoveryIntervalMs: 0 } as PipelineModuleOptions),
        ],
        providers: [FixtureStagedSkills],
      })
      class BenchPipelineModule {}
      app = await NestFactory.createApplicationContext(BenchPipelineModule, { logger: false });
      const pipeline = app.get(ProposalPipeline);
      await direct.connect();
      await direct.query('CREATE TABLE bench_rows (id uuid PRIMARY KEY, payload jsonb NOT NULL)');
      const proposer = { tenantId: 'acme', userId: 'alice', permissions: ['order:submit'] };
      const lead = { tenantId: 'acme', userId: 'lee', permissions: ['desk:lead', 'approval:decide'] };
      const payload = { symbol: 'ACME', qty: 10 };
      const large = { symbol: 'ACME', qty: 200 };

      const insert = async () =>
        (await direct.query('INSERT INTO bench_rows (id, payload) VALUES ($1, $2)', [randomUUID(), JSON.stringify(payload)])).rowCount ?? 0;
      const auto = async () => {
        const out = await pipeline.submit(proposer, { action: 'order.submit', payload });
        if (out.verdict !== 'executed') throw new Error(`expected executed, got ${out.verdict}`);
        return 1;
      };
      const human = async () => {
        const p = await pipeline.submit(proposer, { action: 'order.submit', payload: large });
        if (p.verdict !== 'needs_human') throw new Error(`expected needs_human, got ${p.verdict}`);
        const out = await pipeline.decide(lead, p.proposalId as string, {
          decision: 'approve',
          reason: 'bench',
          version: p.version ?? 1,
          step: 0,
        });
        if (out.verdict !== 'executed') throw new Error(`expected executed, got ${out.verdict}`);
        return 1;
      };
      const ms = await msPerRun({ insert, auto, human }, { warmupRounds: 2, rounds: 7, runsPerRound: 40 });
      for (const [label, value, changes] of [
        ['a proposal executed without a human', ms.auto, 2],
        ['a proposal approved by a human, then executed', ms.human, 3],
      ] as const) {
        const perChange = value / changes;
        const ratio = perChange / ms.insert;
        log(
          `pipeline, ${label}: ${value.toFixed(2)} ms (${changes} state changes, ${perChange.toFixed(2)} ms each); one committed INSERT: ${ms.insert.toFixed(2)} ms (${ratio.toFixed(2)}x)`,
        );
        rows.push({
          name: `pipeline, ${label}: ms per state change vs one committed INSERT, PostgreSQL (ratio = ours/INSERT)`,
          value: perChange,
          unit: 'ms/state change',
          baseline: ms.insert,
          target: { text: 'ratio <= 2', met: ratio <= 2 },
          note: `${value.toFixed(2)} ms per proposal`,
        });
      }
    } finally {
      await app?.close();
      await direct.end().catch(() => undefined);
    }
  });
  return { rows };
}
