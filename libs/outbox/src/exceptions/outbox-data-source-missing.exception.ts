import { OUTBOX_DATA_SOURCE_MISSING_MESSAGE } from '../outbox.messages';

/** OutboxModule found neither a TypeORM DataSource nor a store of yours. */
export class OutboxDataSourceMissingException extends Error {
  constructor() {
    super(OUTBOX_DATA_SOURCE_MISSING_MESSAGE());
    this.name = 'OutboxDataSourceMissingException';
  }
}
