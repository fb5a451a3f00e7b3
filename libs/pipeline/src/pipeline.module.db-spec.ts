import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuardModule, ZMODU_GUARD_MIGRATIONS } from '@zmodu/guard';
import { SkillRegistry, SkillsModule } from '@zmodu/skills';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { PipelineModule, PipelineModuleOptions, ProposalPipeline, ZMODU_PIPELINE_MIGRATIONS } from '@zmodu/pipeline';
import { PROPOSAL_STORE } from '@zmodu/pipeline/internal';
import { FixtureStagedSkills, ORDER_RULES, PipelineEffects1764461200000 } from './__fixtures__/pipeline-app';

/** The application's configuration, from a module of its own: what forRootAsync's factory reads. */
@Injectable()
class PipelineConfig {
  readonly rules: Partial<PipelineModuleOptions> = ORDER_RULES;
}

@Module({ providers: [PipelineConfig], exports: [PipelineConfig] })
class PipelineConfigModule {}

describe('PipelineModule.forRootAsync', () => {
  let db: TestDatabase;
  let app: TestingModule;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(
          await db.options({
            migrations: [...ZMODU_GUARD_MIGRATIONS, ...ZMODU_PIPELINE_MIGRATIONS, PipelineEffects1764461200000],
            migrationsRun: true,
          }),
        ),
        GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' }),
        SkillsModule.forRoot(),
        PipelineModule.forRootAsync({
          imports: [PipelineConfigModule],
          inject: [PipelineConfig],
          useFactory: (config: PipelineConfig) => ({ ...config.rules, recoveryIntervalMs: 0 }) as PipelineModuleOptions,
        }),
      ],
      providers: [FixtureStagedSkills],
    }).compile();
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('takes its options from the factory; the defaults fill the rest (the skills are registered)', async () => {
    const pipeline = app.get(ProposalPipeline);
    expect(pipeline.proposable()).toEqual(['order.submit']);
    expect(app.get(SkillRegistry).get('approval.submit')).toBeDefined();
    const out = await pipeline.submit(
      { tenantId: 'acme', userId: 'alice', permissions: ['order:submit'], runId: 'r-async-1' },
      { action: 'order.submit', payload: { symbol: 'ACME', qty: 5 } },
    );
    expect(out).toMatchObject({ verdict: 'executed', amount: 500 });
    expect(app.get(PROPOSAL_STORE)).toBe(pipeline.store);
  });
});
