import { CHANNEL_NEEDS_OUTBOX_MESSAGE } from '../outbox.messages';
import { ZmoduError } from '@zmodu/core';

/** A webhook or outbox channel without OutboxModule: boot fails. */
export class ChannelNeedsOutboxException extends ZmoduError {
  constructor(readonly channel: string) {
    super(CHANNEL_NEEDS_OUTBOX_MESSAGE(channel));
    this.name = 'ChannelNeedsOutboxException';
  }
}
