import { DUPLICATE_TOPIC_HANDLER_MESSAGE } from '../outbox.messages';

/** A second handler for an outbox topic. */
export class DuplicateTopicHandlerException extends Error {
  constructor(readonly topic: string) {
    super(DUPLICATE_TOPIC_HANDLER_MESSAGE(topic));
    this.name = 'DuplicateTopicHandlerException';
  }
}
