// @zmodu/pipeline/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/pipeline and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { AmountSourceMissingException } from './exceptions/amount-source-missing.exception';
export { InvalidPipelineOptionsException } from './exceptions/invalid-pipeline-options.exception';
export { PipelineCannotStartException } from './exceptions/pipeline-cannot-start.exception';
export { PROPOSAL_STORE } from './pipeline.constants';
