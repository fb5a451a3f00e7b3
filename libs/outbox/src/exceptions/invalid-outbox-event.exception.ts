import { EVENT_TOPIC_MISSING_MESSAGE } from '../outbox.messages';

/** An event without a topic: nothing is written. */
export class InvalidOutboxEventException extends Error {
  constructor() {
    super(EVENT_TOPIC_MISSING_MESSAGE());
    this.name = 'InvalidOutboxEventException';
  }
}
