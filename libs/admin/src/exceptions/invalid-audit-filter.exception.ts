import { ZmoduError } from '@zmodu/core';
/** A filter of an audit export or listing that cannot be read (a bad date, limit, cursor, kind or format): a 400 naming the field. */
export class InvalidAuditFilterException extends ZmoduError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidAuditFilterException';
  }
}
