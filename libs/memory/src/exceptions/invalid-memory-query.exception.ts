import { INVALID_QUERY_MESSAGE } from '../memory.messages';

/** Recall caps or a list page that are not positive integers. */
export class InvalidMemoryQueryException extends Error {
  constructor(problem: string) {
    super(INVALID_QUERY_MESSAGE(problem));
    this.name = 'InvalidMemoryQueryException';
  }
}
