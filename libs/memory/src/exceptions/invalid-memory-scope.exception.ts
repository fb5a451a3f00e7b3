import { INVALID_SCOPE_MESSAGE } from '../memory.messages';

/** A write without a valid tenant and user (missing, empty, whitespace, '0', not a string). */
export class InvalidMemoryScopeException extends Error {
  constructor(what: string) {
    super(INVALID_SCOPE_MESSAGE(what));
    this.name = 'InvalidMemoryScopeException';
  }
}
