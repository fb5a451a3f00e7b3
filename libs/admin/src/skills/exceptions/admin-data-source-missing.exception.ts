import { ADMIN_DATA_SOURCE_MISSING_MESSAGE } from '../admin-skills.messages';
import { ZmoduError } from '@zmodu/core';

/** The default (TypeORM) config store was chosen, with keys declared, but the application has no DataSource. */
export class AdminDataSourceMissingException extends ZmoduError {
  constructor() {
    super(ADMIN_DATA_SOURCE_MISSING_MESSAGE);
    this.name = 'AdminDataSourceMissingException';
  }
}
