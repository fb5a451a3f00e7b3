/** A NotifyModule channel that cannot work (name, url, secret, handler, topic, type): boot fails. */
export class InvalidChannelException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidChannelException';
  }
}
