import { PIPELINE_CANNOT_START_MESSAGE } from '../pipeline.messages';
import { ZmoduError } from '@zmodu/core';

/** The boot check found actions, rules or proposables that do not fit the registered skills; each problem says what to fix. */
export class PipelineCannotStartException extends ZmoduError {
  constructor(readonly problems: readonly string[]) {
    super(PIPELINE_CANNOT_START_MESSAGE(problems));
    this.name = 'PipelineCannotStartException';
  }
}
