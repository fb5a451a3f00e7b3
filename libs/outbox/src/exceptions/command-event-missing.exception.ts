import { COMMAND_EVENT_MISSING_MESSAGE } from '../outbox.messages';
import { ZmoduError } from '@zmodu/core';

/** A command handler returned no event to publish: its transaction rolls back. */
export class CommandEventMissingException extends ZmoduError {
  constructor(readonly command: string) {
    super(COMMAND_EVENT_MISSING_MESSAGE(command));
    this.name = 'CommandEventMissingException';
  }
}
