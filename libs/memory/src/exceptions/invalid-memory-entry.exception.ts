import { INVALID_ENTRY_MESSAGE } from '../memory.messages';
import { ZmoduError } from '@zmodu/core';

/** An entry that cannot be stored (empty or too long content, bad kind, agent or expiry). */
export class InvalidMemoryEntryException extends ZmoduError {
  constructor(problem: string) {
    super(INVALID_ENTRY_MESSAGE(problem));
    this.name = 'InvalidMemoryEntryException';
  }
}
