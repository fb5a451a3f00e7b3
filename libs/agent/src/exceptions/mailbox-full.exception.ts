import { MAILBOX_FULL_MESSAGE } from '../agent.messages';

/** `AgentWorker.post` when this instance already holds `mailboxSize` waiting goals: retry later (HTTP 429). */
export class MailboxFullException extends Error {
  constructor(
    readonly mailboxSize: number,
    readonly retryAfterSeconds: number,
  ) {
    super(MAILBOX_FULL_MESSAGE(mailboxSize, retryAfterSeconds));
    this.name = 'MailboxFullException';
  }
}
