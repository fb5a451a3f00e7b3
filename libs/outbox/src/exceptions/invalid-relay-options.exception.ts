import { ZmoduError } from '@zmodu/core';
/** OutboxRelay options that cannot work (see RELAY_OPTION_MESSAGE and RELAY_LEASE_MESSAGE): the relay is not created. */
export class InvalidRelayOptionsException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRelayOptionsException';
  }
}
