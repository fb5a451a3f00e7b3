import { ZmoduError } from '@zmodu/core';
/** A NotifyModule channel that cannot work (name, url, secret, handler, topic, type): boot fails. */
export class InvalidChannelException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidChannelException';
  }
}
