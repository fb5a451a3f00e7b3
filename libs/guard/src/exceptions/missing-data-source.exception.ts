import { MISSING_DATA_SOURCE_MESSAGE } from '../guard.messages';
import { ZmoduError } from '@zmodu/core';

/** GuardModule with TypeORM stores (the default) in an application without a TypeORM DataSource. */
export class MissingDataSourceException extends ZmoduError {
  constructor() {
    super(MISSING_DATA_SOURCE_MESSAGE);
    this.name = 'MissingDataSourceException';
  }
}
