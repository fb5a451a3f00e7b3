import { CALLER_NOT_CHECKED_MESSAGE } from '../http.messages';
import { ZmoduError } from '@zmodu/core';

/** `@CallerContext()` read on a route whose caller HttpCallerGuard did not check: a programming error (a 500). */
export class CallerContextMissingException extends ZmoduError {
  constructor() {
    super(CALLER_NOT_CHECKED_MESSAGE);
    this.name = 'CallerContextMissingException';
  }
}
