import { Module } from '@nestjs/common';
import { PipelineSkills } from './pipeline-skills';
import { PIPELINE_OPTIONS, PROPOSAL_STORE } from './pipeline.constants';
import { ConfigurablePipelineModule, PIPELINE_MODULE_OPTIONS } from './pipeline.module-definition';
import { PipelineModuleOptions, resolvePipelineOptions } from './pipeline.options';
import { ProposalPipeline } from './proposal-pipeline';
import { PipelineProposalOutcomes } from './proposal-outcomes';
import { PROPOSAL_OUTCOMES } from '@zmodu/guard/internal';

/**
 * ProposalPipeline (global) and, unless `registerSkills: false`, the approval.submit and
 * approval.request skills. `forRoot(options)` or `forRootAsync({ useFactory, inject })`. Needs a
 * TypeORM DataSource migrated with zmoduMigrations() (or a `store` of your own),
 * and SkillsModule (AgentModule imports it) for the skills.
 */
@Module({
  providers: [
    {
      provide: PIPELINE_OPTIONS,
      inject: [PIPELINE_MODULE_OPTIONS],
      useFactory: (raw: PipelineModuleOptions) => resolvePipelineOptions(raw),
    },
    ProposalPipeline,
    { provide: PROPOSAL_STORE, inject: [ProposalPipeline], useFactory: (pipeline: ProposalPipeline) => pipeline.store },
    PipelineSkills,
    // What a run waiting on a proposal reads when it may go on (the AgentWorker of @zmodu/agent).
    { provide: PROPOSAL_OUTCOMES, useClass: PipelineProposalOutcomes },
  ],
  exports: [ProposalPipeline, PROPOSAL_STORE, PROPOSAL_OUTCOMES],
})
export class PipelineModule extends ConfigurablePipelineModule {}
