import { ZmoduError } from '@zmodu/core';

/** OutboxModule options that cannot work (its `store`): boot fails, naming the option. */
export class InvalidOutboxOptionsException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidOutboxOptionsException';
  }
}
