import { CALLER_NOT_CHECKED_MESSAGE } from '../admin.messages';
import { ZmoduError } from '@zmodu/core';

/** An endpoint read @CurrentCaller() without @RequireAdminPermission: a programming error, never a caller's. */
export class CallerNotCheckedException extends ZmoduError {
  constructor() {
    super(CALLER_NOT_CHECKED_MESSAGE());
    this.name = 'CallerNotCheckedException';
  }
}
