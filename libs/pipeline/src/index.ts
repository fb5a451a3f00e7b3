// The public API of @zmodu/pipeline. Anything not named here is internal.
export { PipelineModule } from './pipeline.module';
export type { PipelineModuleAsyncOptions } from './pipeline.module-definition';
export { APPROVAL_RECORD_ACTION, DEFAULT_EXPIRY_MS, DEFAULT_STEPS, PipelineModuleOptions } from './pipeline.options';
export type { AmountContext, AmountFunction, ApprovalChainRule, ApprovalOptions, StagedActionOptions } from './pipeline.options';
export { InjectProposalStore, PROPOSAL_STORE } from './pipeline.constants';
export { ProposalPipeline } from './proposal-pipeline';
export type { Approver, EditPreview, EditPreviewInput, ProposalPage } from './proposal-pipeline';
export type {
  ApprovalStep,
  DecisionInput,
  DecisionRecord,
  PipelineOutcome,
  ProposalContext,
  ProposalEdit,
  ProposalInput,
  ProposalRecord,
  ProposalStatus,
  ProposalVerdict,
} from './proposal.types';
export type { ReviewInput, RiskReviewer, RiskRules, RiskVerdict } from './risk-review';
export type { DecisionWrite, NewProposal, ProposalPageQuery, ProposalStore, StoredDecision } from './proposal.store';
export { TypeOrmProposalStore } from './typeorm-proposal.store';
export { ZMODU_PIPELINE_ENTITIES, ZMODU_PIPELINE_MIGRATIONS } from './pipeline.entities';
export { AmountSourceMissingException } from './exceptions/amount-source-missing.exception';
export { ApprovalForbiddenException } from './exceptions/approval-forbidden.exception';
export { InvalidPipelineOptionsException } from './exceptions/invalid-pipeline-options.exception';
export { InvalidProposalException } from './exceptions/invalid-proposal.exception';
export { PipelineCannotStartException } from './exceptions/pipeline-cannot-start.exception';
export { PipelineDataSourceMissingException } from './exceptions/pipeline-data-source-missing.exception';
export { ProposalConflictException } from './exceptions/proposal-conflict.exception';
export type { ProposalPosition } from './exceptions/proposal-conflict.exception';
export { ProposalEditRefusedException } from './exceptions/proposal-edit-refused.exception';
export { ProposalNotFoundException } from './exceptions/proposal-not-found.exception';
