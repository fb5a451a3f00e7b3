import { MAILBOX_FULL_MESSAGE, TENANT_MAILBOX_FULL_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/**
 * `AgentWorker.post` when the mailbox already holds `mailboxSize` waiting goals, or the posting tenant its whole share
 * (`tenantShare`, the option `mailboxPerTenant`): retry after `retryAfterSeconds` (HTTP 429 with Retry-After).
 */
export class MailboxFullException extends ZmoduError {
  constructor(
    readonly mailboxSize: number,
    readonly retryAfterSeconds: number,
    readonly tenantShare?: number,
  ) {
    super(
      tenantShare === undefined
        ? MAILBOX_FULL_MESSAGE(mailboxSize, retryAfterSeconds)
        : TENANT_MAILBOX_FULL_MESSAGE(tenantShare, retryAfterSeconds),
    );
    this.name = 'MailboxFullException';
  }
}
