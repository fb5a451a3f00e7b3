import { INVALID_QUERY_MESSAGE } from '../memory.messages';
import { ZmoduError } from '@zmodu/core';

/** Recall caps or a list page that are not positive integers. */
export class InvalidMemoryQueryException extends ZmoduError {
  constructor(problem: string) {
    super(INVALID_QUERY_MESSAGE(problem));
    this.name = 'InvalidMemoryQueryException';
  }
}
