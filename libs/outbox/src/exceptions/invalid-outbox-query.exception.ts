import { ZmoduError } from '@zmodu/core';
/** A list query of OutboxService with a value out of range (a RangeError, as before). */
export class InvalidOutboxQueryException extends ZmoduError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidOutboxQueryException';
  }
}
