import { OUTBOX_NOT_DEAD_MESSAGE } from '../outbox.messages';
import type { OutboxStatus } from '../outbox.types';
import { ZmoduError } from '@zmodu/core';

/** A retry of an event that is not dead-lettered: nothing changes (HTTP: 409). */
export class OutboxConflictException extends ZmoduError {
  constructor(
    readonly eventId: string,
    readonly status: OutboxStatus,
  ) {
    super(OUTBOX_NOT_DEAD_MESSAGE(eventId, status));
    this.name = 'OutboxConflictException';
  }
}
