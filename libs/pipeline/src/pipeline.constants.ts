import { Inject } from '@nestjs/common';

/**
 * Public token: the `ProposalStore` the pipeline uses (the one of its `store` option, or the
 * TypeOrmProposalStore it made). Inject it with `@InjectProposalStore()`.
 */
export const PROPOSAL_STORE = Symbol('zmodu:PROPOSAL_STORE');

/** Inject the pipeline's store (the `PROPOSAL_STORE` token). */
export const InjectProposalStore = () => Inject(PROPOSAL_STORE);

/** Internal: PipelineModule's options with their defaults, merged once (from PIPELINE_MODULE_OPTIONS, as given to forRoot/forRootAsync). */
export const PIPELINE_OPTIONS = Symbol('zmodu:PIPELINE_OPTIONS');
