import { OUTBOX_DATA_SOURCE_MISSING_MESSAGE } from '../outbox.messages';
import { ZmoduError } from '@zmodu/core';

/** OutboxModule found neither a TypeORM DataSource nor a store of yours. */
export class OutboxDataSourceMissingException extends ZmoduError {
  constructor() {
    super(OUTBOX_DATA_SOURCE_MISSING_MESSAGE());
    this.name = 'OutboxDataSourceMissingException';
  }
}
