import { INVALID_OPTIONS_MESSAGE } from '../memory.messages';

/** MemoryModule options that cannot work: boot fails. */
export class InvalidMemoryOptionsException extends Error {
  constructor(problem: string) {
    super(INVALID_OPTIONS_MESSAGE(problem));
    this.name = 'InvalidMemoryOptionsException';
  }
}
