import { Module } from '@nestjs/common';
import { PipelineSkills } from './pipeline-skills';
import { ConfigurablePipelineModule } from './pipeline.module-definition';
import { ProposalPipeline } from './proposal-pipeline';

/**
 * ProposalPipeline (global) and, unless `registerSkills: false`, the approval.submit and
 * approval.request skills. Needs a TypeORM DataSource with ZMODU_PIPELINE_ENTITIES and
 * ZMODU_PIPELINE_MIGRATIONS, and SkillsModule (AgentModule imports it) for the skills.
 */
@Module({ providers: [ProposalPipeline, PipelineSkills], exports: [ProposalPipeline] })
export class PipelineModule extends ConfigurablePipelineModule {}
