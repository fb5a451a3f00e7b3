import { PIPELINE_DATA_SOURCE_MISSING_MESSAGE } from '../pipeline.messages';
import { ZmoduError } from '@zmodu/core';

/** PipelineModule found neither a TypeORM DataSource nor a store of yours. */
export class PipelineDataSourceMissingException extends ZmoduError {
  constructor() {
    super(PIPELINE_DATA_SOURCE_MISSING_MESSAGE());
    this.name = 'PipelineDataSourceMissingException';
  }
}
