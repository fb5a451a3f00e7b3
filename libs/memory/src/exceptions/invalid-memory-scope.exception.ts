import { INVALID_SCOPE_MESSAGE } from '../memory.messages';
import { ZmoduError } from '@zmodu/core';

/** A write without a valid tenant and user (missing, empty, whitespace, '0', not a string). */
export class InvalidMemoryScopeException extends ZmoduError {
  constructor(what: string) {
    super(INVALID_SCOPE_MESSAGE(what));
    this.name = 'InvalidMemoryScopeException';
  }
}
