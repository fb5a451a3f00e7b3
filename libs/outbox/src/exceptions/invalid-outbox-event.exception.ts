import { EVENT_TOPIC_MISSING_MESSAGE } from '../outbox.messages';
import { ZmoduError } from '@zmodu/core';

/** An event without a topic: nothing is written. */
export class InvalidOutboxEventException extends ZmoduError {
  constructor() {
    super(EVENT_TOPIC_MISSING_MESSAGE());
    this.name = 'InvalidOutboxEventException';
  }
}
