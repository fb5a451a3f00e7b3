import { PIPELINE_DATA_SOURCE_MISSING_MESSAGE } from '../pipeline.messages';

/** PipelineModule found neither a TypeORM DataSource nor a store of yours. */
export class PipelineDataSourceMissingException extends Error {
  constructor() {
    super(PIPELINE_DATA_SOURCE_MISSING_MESSAGE());
    this.name = 'PipelineDataSourceMissingException';
  }
}
