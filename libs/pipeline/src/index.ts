export * from './proposal.types';
export * from './pipeline.options';
export * from './risk-review';
export * from './proposal-pipeline';
export * from './pipeline.module';
export { PIPELINE_MODULE_OPTIONS } from './pipeline.module-definition';
export * from './pipeline.entities';
export * from './exceptions/proposal.exceptions';
export { PipelineSkills } from './pipeline-skills';
