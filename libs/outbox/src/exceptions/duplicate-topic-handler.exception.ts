import { DUPLICATE_TOPIC_HANDLER_MESSAGE } from '../outbox.messages';
import { ZmoduError } from '@zmodu/core';

/** A second handler for an outbox topic. */
export class DuplicateTopicHandlerException extends ZmoduError {
  constructor(readonly topic: string) {
    super(DUPLICATE_TOPIC_HANDLER_MESSAGE(topic));
    this.name = 'DuplicateTopicHandlerException';
  }
}
