import { NO_DATABASE_TO_READ_MESSAGE } from '../pipeline.messages';
import { ZmoduError } from '@zmodu/core';

/** An amount function asked to read data with no database to read from: the proposal is refused, naming this. */
export class AmountSourceMissingException extends ZmoduError {
  constructor() {
    super(NO_DATABASE_TO_READ_MESSAGE());
    this.name = 'AmountSourceMissingException';
  }
}
