import { INVALID_POLICY_MESSAGE } from '../guard.messages';
import { ZmoduError } from '@zmodu/core';

export class InvalidPolicyException extends ZmoduError {
  constructor(what: string) {
    super(INVALID_POLICY_MESSAGE(what));
    this.name = 'InvalidPolicyException';
  }
}
