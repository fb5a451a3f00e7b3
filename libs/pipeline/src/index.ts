// The public API of @zmodu/pipeline. Anything not named here is internal.
export { PipelineModule } from './pipeline.module';
export type { PipelineModuleAsyncOptions } from './pipeline.module-definition';
export { PipelineModuleOptions } from './pipeline.options';
export type { AmountContext, AmountFunction, ApprovalOptions } from './pipeline.options';
export { InjectProposalStore } from './pipeline.constants';
export { ProposalPipeline } from './proposal-pipeline';
export type { Approver, EditPreview, ProposalPage } from './proposal-pipeline';
export type { DecisionInput, DecisionRecord, PipelineOutcome, ProposalRecord, ProposalStatus } from './proposal.types';
export type { RiskReviewer, RiskRules, RiskVerdict } from './risk-review';
export type { ProposalStore } from './proposal.store';
export { ZMODU_PIPELINE_MIGRATIONS } from './pipeline.migrations';
export { ApprovalForbiddenException } from './exceptions/approval-forbidden.exception';
export { InvalidProposalException } from './exceptions/invalid-proposal.exception';
export { ProposalConflictException } from './exceptions/proposal-conflict.exception';
export { ProposalEditRefusedException } from './exceptions/proposal-edit-refused.exception';
export { ProposalNotFoundException } from './exceptions/proposal-not-found.exception';
export { ZmoduError } from '@zmodu/core';
