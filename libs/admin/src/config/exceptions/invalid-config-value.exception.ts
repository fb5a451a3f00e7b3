import { INVALID_CONFIG_VALUE_MESSAGE } from '../../skills/admin-skills.messages';
import { ZmoduError } from '@zmodu/core';

/** A value that does not fit its key's declared type. */
export class InvalidConfigValueException extends ZmoduError {
  constructor(
    readonly key: string,
    readonly problems: readonly string[],
  ) {
    super(INVALID_CONFIG_VALUE_MESSAGE(key, problems.join('; ')));
    this.name = 'InvalidConfigValueException';
  }
}
