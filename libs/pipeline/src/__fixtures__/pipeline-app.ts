import { Injectable } from '@nestjs/common';
import { TestingModule, Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { PipelineModule, PipelineModuleOptions, ProposalPipeline, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { Skill, SkillInvocation, SkillsModule } from '@zmodu/skills';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { TestDatabase } from '@zmodu/db/testing';

/** A table the staged skills write through the executing transaction (one row per executed proposal), and the prices amounts read. */
export class PipelineEffects1764461200000 implements MigrationInterface {
  name = 'PipelineEffects1764461200000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE IF NOT EXISTS effects (proposal_id uuid PRIMARY KEY, payload jsonb NOT NULL, approvers jsonb, at timestamptz NOT NULL DEFAULT now())',
    );
    await q.query('CREATE TABLE IF NOT EXISTS test_prices (symbol text PRIMARY KEY, price numeric NOT NULL)');
    await q.query(
      `INSERT INTO test_prices (symbol, price) VALUES ('ACME', 100), ('RISKY', 100), ('BANNED', 100), ('FINE', 100) ON CONFLICT DO NOTHING`,
    );
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE effects');
    await q.query('DROP TABLE test_prices');
  }
}

/** The fixture's staged actions: order.submit (priced at 100 a unit from test_prices) and flaky.thing (writes, then fails). */
@Injectable()
export class FixtureStagedSkills {
  @Skill({
    name: 'order.submit',
    action: 'execute',
    staged: true,
    requiredPermission: 'order:submit',
    description: 'Submit an order (staged)',
    parameters: {
      type: 'object',
      properties: { symbol: { type: 'string', pattern: '^[A-Z]{1,6}$' }, qty: { type: 'integer', minimum: 1, maximum: 1_000_000 } },
      required: ['symbol', 'qty'],
      additionalProperties: false,
    },
  })
  async submit(args: { symbol: string; qty: number }, ctx: SkillInvocation) {
    const staged = ctx.staged!;
    await staged.transaction.query('INSERT INTO effects (proposal_id, payload, approvers) VALUES ($1, $2, $3)', [
      staged.proposalId,
      JSON.stringify(args),
      JSON.stringify(staged.approvers),
    ]);
    return { submitted: true, proposal: staged.proposalId, qty: args.qty };
  }

  @Skill({
    name: 'flaky.thing',
    action: 'execute',
    staged: true,
    description: 'Writes, then fails',
    parameters: { type: 'object', properties: { x: { type: 'integer' } } },
  })
  async flaky(args: Record<string, unknown>, ctx: SkillInvocation) {
    await ctx.staged!.transaction.query('INSERT INTO effects (proposal_id, payload) VALUES ($1, $2)', [
      ctx.staged!.proposalId,
      JSON.stringify(args),
    ]);
    throw new Error('downstream refused');
  }
}

export const ORDER_RULES: Partial<PipelineModuleOptions> = {
  actions: {
    'order.submit': {
      amount: async (payload, ctx) => {
        const [row] = await ctx.query<{ price: string }>('SELECT price FROM test_prices WHERE symbol = $1', [payload.symbol]);
        if (!row) throw new Error(`no price for ${String(payload.symbol)}`);
        return Number(row.price) * Number(payload.qty);
      },
    },
    'flaky.thing': { amount: () => 1 },
  },
  proposable: ['order.submit'],
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

export async function startPipelineApp(
  db: TestDatabase,
  options: Partial<PipelineModuleOptions> = {},
): Promise<{ app: TestingModule; pipeline: ProposalPipeline; ds: DataSource }> {
  const dsOptions = await db.options({
    migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, PipelineEffects1764461200000],
    migrationsRun: true,
  });
  const app = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(dsOptions),
      GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
      SkillsModule.forRoot(),
      PipelineModule.forRoot({ ...ORDER_RULES, recoveryIntervalMs: 0, ...options } as PipelineModuleOptions),
    ],
    providers: [FixtureStagedSkills],
  }).compile();
  await app.init();
  return { app, pipeline: app.get(ProposalPipeline), ds: app.get<DataSource>(getDataSourceToken()) };
}
