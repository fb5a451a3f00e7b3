import { INVALID_POLICY_MESSAGE } from '../guard.messages';

export class InvalidPolicyException extends Error {
  constructor(what: string) {
    super(INVALID_POLICY_MESSAGE(what));
    this.name = 'InvalidPolicyException';
  }
}
