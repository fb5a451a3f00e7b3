import { INVALID_REDACTION_MESSAGE } from '../guard.messages';
import { ZmoduError } from '@zmodu/core';

/** Bad `redaction` options in GuardModule.forRoot (or AgentModule's `guard`): thrown at boot, naming the field. */
export class InvalidRedactionOptionsException extends ZmoduError {
  constructor(what: string) {
    super(INVALID_REDACTION_MESSAGE(what));
    this.name = 'InvalidRedactionOptionsException';
  }
}
