import { ZmoduError } from '@zmodu/core';
/** A command of OutboxModule's `commands` that cannot work (name, handler, duplicate, parameters): boot fails. */
export class InvalidCommandException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCommandException';
  }
}
