import { DATA_SOURCE_MISSING_MESSAGE } from '../memory.messages';
import { ZmoduError } from '@zmodu/core';

/** The default TypeORM store without a DataSource in the app: boot fails. */
export class MemoryDataSourceMissingException extends ZmoduError {
  constructor() {
    super(DATA_SOURCE_MISSING_MESSAGE);
    this.name = 'MemoryDataSourceMissingException';
  }
}
