import { INVALID_CONFIG_WRITE_MESSAGE } from '../../skills/admin-skills.messages';
import { ZmoduError } from '@zmodu/core';

/** A config store was asked something it cannot do (no tenant, a bad key or version, a value that is not JSON). */
export class InvalidConfigWriteException extends ZmoduError {
  constructor(problem: string) {
    super(INVALID_CONFIG_WRITE_MESSAGE(problem));
    this.name = 'InvalidConfigWriteException';
  }
}
