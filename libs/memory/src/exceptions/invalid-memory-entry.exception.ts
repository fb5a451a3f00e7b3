import { INVALID_ENTRY_MESSAGE } from '../memory.messages';

/** An entry that cannot be stored (empty or too long content, bad kind, agent or expiry). */
export class InvalidMemoryEntryException extends Error {
  constructor(problem: string) {
    super(INVALID_ENTRY_MESSAGE(problem));
    this.name = 'InvalidMemoryEntryException';
  }
}
