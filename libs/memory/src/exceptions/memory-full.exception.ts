import { MEMORY_FULL_MESSAGE } from '../memory.messages';
import { ZmoduError } from '@zmodu/core';

/** A write past the scope's maxNotesPerUser: refused (nothing is evicted); forget notes to make room. */
export class MemoryFullException extends ZmoduError {
  constructor(
    readonly tenantId: string,
    readonly userId: string,
    readonly maxNotesPerUser: number,
  ) {
    super(MEMORY_FULL_MESSAGE(maxNotesPerUser));
    this.name = 'MemoryFullException';
  }
}
