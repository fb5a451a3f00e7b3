/** A command of OutboxModule's `commands` that cannot work (name, handler, duplicate, parameters): boot fails. */
export class InvalidCommandException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCommandException';
  }
}
