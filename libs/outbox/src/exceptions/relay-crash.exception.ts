import { RELAY_CRASH_MESSAGE } from '../outbox.messages';
import { ZmoduError } from '@zmodu/core';

/** Thrown by a relay hook to simulate the relay's process dying: it stops at once and settles nothing. */
export class RelayCrash extends ZmoduError {
  constructor(where: string) {
    super(RELAY_CRASH_MESSAGE(where));
    this.name = 'RelayCrash';
  }
}
