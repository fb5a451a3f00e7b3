import { TestingModule, Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule, ZMODU_GUARD_ENTITIES, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { PipelineModule, PipelineModuleOptions, ProposalPipeline, ZMODU_PIPELINE_ENTITIES, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { SkillsModule } from '@zmodu/skills';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { TestDatabase } from './test-database';

/** A table the test executor writes through the executing transaction: one row per executed proposal. */
export class PipelineEffects1764461200000 implements MigrationInterface {
  name = 'PipelineEffects1764461200000';
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE IF NOT EXISTS effects (proposal_id uuid PRIMARY KEY, payload jsonb NOT NULL, at timestamptz NOT NULL DEFAULT now())');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE effects');
  }
}

export const ORDER_RULES: Partial<PipelineModuleOptions> = {
  risk: {
    thresholds: { 'order.submit': { escalateAt: 10_000 } },
    tenantLimits: { acme: 500_000, '*': 1_000_000 },
  },
  approval: {
    chains: {
      'order.submit': [
        { minAmount: 10_000, steps: [{ name: 'desk lead', permission: 'desk:lead' }] },
        { minAmount: 100_000, steps: [{ name: 'second approver', permission: 'approval:decide' }] },
      ],
    },
  },
};

export function orderExecutors(): PipelineModuleOptions['executors'] {
  return {
    'order.submit': async (p, { manager, idempotencyKey }) => {
      await manager.query('INSERT INTO effects (proposal_id, payload) VALUES ($1, $2)', [idempotencyKey, JSON.stringify(p.payload)]);
      return { submitted: true, proposal: p.id };
    },
    'flaky.thing': async (p, { manager, idempotencyKey }) => {
      await manager.query('INSERT INTO effects (proposal_id, payload) VALUES ($1, $2)', [idempotencyKey, JSON.stringify(p.payload)]);
      throw new Error('downstream refused');
    },
  };
}

export async function startPipelineApp(db: TestDatabase, options: Partial<PipelineModuleOptions> = {}): Promise<{ app: TestingModule; pipeline: ProposalPipeline; ds: DataSource }> {
  const dsOptions = await db.options({
    entities: [...ZMODU_GUARD_ENTITIES, ...ZMODU_PIPELINE_ENTITIES],
    migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, PipelineEffects1764461200000],
    migrationsRun: true,
  });
  const app = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(dsOptions),
      GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
      SkillsModule.forRoot(),
      PipelineModule.forRoot({ executors: orderExecutors(), ...ORDER_RULES, recoveryIntervalMs: 0, ...options }),
    ],
  }).compile();
  await app.init();
  return { app, pipeline: app.get(ProposalPipeline), ds: app.get<DataSource>(getDataSourceToken()) };
}
