import { ZmoduError } from '@zmodu/core';
/** This caller may not decide this step (separation of duties, or a missing permission). HTTP: 403. */
export class ApprovalForbiddenException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'ApprovalForbiddenException';
  }
}
