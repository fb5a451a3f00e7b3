import { INVALID_REDACTION_MESSAGE } from '../guard.messages';

/** Bad `redaction` options in GuardModule.forRoot (or AgentModule's `guard`): thrown at boot, naming the field. */
export class InvalidRedactionOptionsException extends Error {
  constructor(what: string) {
    super(INVALID_REDACTION_MESSAGE(what));
    this.name = 'InvalidRedactionOptionsException';
  }
}
