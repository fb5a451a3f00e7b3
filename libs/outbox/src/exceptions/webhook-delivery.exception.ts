import { ZmoduError } from '@zmodu/core';
/** One webhook attempt failed (a non-2xx answer, or a channel that is no longer a webhook): the outbox retries it. */
export class WebhookDeliveryException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookDeliveryException';
  }
}
