import { INVALID_OPTIONS_MESSAGE } from '../memory.messages';
import { ZmoduError } from '@zmodu/core';

/** MemoryModule options that cannot work: boot fails. */
export class InvalidMemoryOptionsException extends ZmoduError {
  constructor(problem: string) {
    super(INVALID_OPTIONS_MESSAGE(problem));
    this.name = 'InvalidMemoryOptionsException';
  }
}
