import { CHANNEL_NEEDS_OUTBOX_MESSAGE } from '../outbox.messages';

/** A webhook or outbox channel without OutboxModule: boot fails. */
export class ChannelNeedsOutboxException extends Error {
  constructor(readonly channel: string) {
    super(CHANNEL_NEEDS_OUTBOX_MESSAGE(channel));
    this.name = 'ChannelNeedsOutboxException';
  }
}
