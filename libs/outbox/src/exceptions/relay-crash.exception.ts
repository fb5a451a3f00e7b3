import { RELAY_CRASH_MESSAGE } from '../outbox.messages';

/** Thrown by a relay hook to simulate the relay's process dying: it stops at once and settles nothing. */
export class RelayCrash extends Error {
  constructor(where: string) {
    super(RELAY_CRASH_MESSAGE(where));
    this.name = 'RelayCrash';
  }
}
